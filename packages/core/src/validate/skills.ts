/**
 * `unknown-command` (4.4): only when the commands are known. `assign` is built in;
 * `final_answer` and `cannot_complete` are reserved and always known. `argument-count`: a known
 * command whose provider says how many arguments it takes (an MCP tool) given too many or too few.
 */
import type { Declaration } from '../ast';
import { BUILTIN_COMMANDS, type CommandSpec, type CommandSurface } from '../commands/surface';
import type { Diagnostic } from '../diagnostics/diagnostic';
import type { SyntaxTree } from '../syntax/tree';
import { spanRanges } from '../text/source-range';
import { didYouMean, suggest } from './suggest';

/** True when `command` is known to a plan with these commands. */
export function isKnownCommand(command: string, commands: CommandSurface): boolean {
  return BUILTIN_COMMANDS.includes(command) || commands.has(command);
}

export function checkCommands(tree: SyntaxTree, commands: CommandSurface): Diagnostic[] {
  const out: Diagnostic[] = [];
  const { commandId, commandNames } = tree.a;
  // Whether each distinct command is known (1) or not (2), and the suggestions for unknown ones.
  const known = new Uint8Array(commandNames.length);
  const hints: (string[] | undefined)[] = [];
  let names: string[] | null = null;
  for (let i = 0; i < tree.count; i++) {
    const id = commandId[i]!;
    if (id === -1) continue;
    const command = commandNames[id]!;
    if (known[id] === 0) known[id] = isKnownCommand(command, commands) ? 1 : commands.mayBeUnlisted(command) ? 3 : 2;
    if (known[id] === 3) continue;
    if (known[id] === 1) {
      // Only commands whose provider gives an arity (MCP tools) materialise their declarations.
      const spec = commands.get(command);
      const problem = spec?.arguments ? checkArgumentCount(tree.declaration(i), spec) : null;
      if (problem) out.push(problem);
      continue;
    }
    names ??= [...commands.names, ...BUILTIN_COMMANDS];
    const suggestions = (hints[id] ??= suggest(command, names));
    out.push({
      code: 'unknown-command',
      severity: 'error',
      message: `Unknown command '${command}': it is not in the skills description.${didYouMean(suggestions)}`.replace(/\.$/, ''),
      range: tree.commandRange(i),
      data: { name: command, suggestions },
    });
  }
  return out;
}

/** The parameter names of a command, for messages: `(path, head?, tail?)`. */
function parameterList(spec: CommandSpec): string {
  const params = spec.parameters ?? [];
  return params.length > 0 ? ` (${params.map((p) => (p.required ? p.name : `${p.name}?`)).join(', ')})` : '';
}

/** `argument-count` for one declaration of a command with a known arity, or null. */
function checkArgumentCount(d: Declaration, spec: CommandSpec): Diagnostic | null {
  const arity = spec.arguments!;
  const args = d.arguments;
  const count = args.length;
  if (count >= arity.minimum && count <= arity.maximum) return null;
  if (count === 1 && arity.object) {
    const only = args[0]!;
    // A $reference may hold the arguments object; a literal may be one (`'{"path": "a"}'`).
    if (only.kind === 'reference' || only.value.trimStart().startsWith('{')) return null;
  }
  const command = d.command!;
  const takes = arity.minimum === arity.maximum
    ? `${arity.maximum} argument${arity.maximum === 1 ? '' : 's'}`
    : `${arity.minimum} to ${arity.maximum} arguments`;
  const params = spec.parameters ?? [];
  let message: string;
  let range = command.range;
  if (count > arity.maximum) {
    message = `'${command.name}' takes ${takes}${parameterList(spec)}; got ${count}`;
    const first = args[arity.maximum]!.range;
    const last = args[count - 1]!.range;
    range = spanRanges(first, last);
  } else {
    const missing = params.slice(count, arity.minimum).filter((p) => p.required).map((p) => p.name);
    message = `'${command.name}' takes ${takes}${parameterList(spec)}; got ${count}${missing.length > 0 ? `: missing ${missing.join(', ')}` : ''}`;
  }
  return {
    code: 'argument-count',
    severity: 'error',
    message,
    range,
    data: { name: command.name },
  };
}
