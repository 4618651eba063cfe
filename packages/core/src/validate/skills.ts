/**
 * `unknown-command` (4.4): only when the commands are known. `assign` is built in;
 * `final_answer` and `cannot_complete` are reserved and always known. `argument-count`: a known
 * command whose provider says how many arguments it takes (an MCP tool) given too many or too few.
 */
import type { Declaration, Plan } from '../ast';
import { BUILTIN_COMMANDS, type CommandSpec, type CommandSurface } from '../commands/surface';
import type { Diagnostic } from '../diagnostics/diagnostic';
import { spanRanges } from '../text/source-range';
import { didYouMean, suggest } from './suggest';

/** True when `command` is known to a plan with these commands. */
export function isKnownCommand(command: string, commands: CommandSurface): boolean {
  return BUILTIN_COMMANDS.includes(command) || commands.has(command);
}

export function checkCommands(plan: Plan, commands: CommandSurface): Diagnostic[] {
  const out: Diagnostic[] = [];
  let names: string[] | null = null;
  for (const d of plan.declarations) {
    if (!d.command) continue;
    if (isKnownCommand(d.command.name, commands)) {
      const spec = commands.get(d.command.name);
      const problem = spec?.arguments ? checkArgumentCount(d, spec) : null;
      if (problem) out.push(problem);
      continue;
    }
    if (commands.mayBeUnlisted(d.command.name)) continue;
    names ??= [...commands.names, ...BUILTIN_COMMANDS];
    const suggestions = suggest(d.command.name, names);
    out.push({
      code: 'unknown-command',
      severity: 'error',
      message: `Unknown command '${d.command.name}': it is not in the skills description.${didYouMean(suggestions)}`.replace(/\.$/, ''),
      range: d.command.range,
      data: { name: d.command.name, suggestions },
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
