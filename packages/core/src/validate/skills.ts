/**
 * `unknown-command` (4.4): only when the commands are known. `assign` is built in;
 * `final_answer` and `cannot_complete` are reserved and always known.
 */
import { BUILTIN_COMMANDS, type CommandSurface } from '../commands/surface';
import type { Diagnostic } from '../diagnostics/diagnostic';
import type { SyntaxTree } from '../syntax/tree';
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
    if (known[id] === 0) known[id] = isKnownCommand(command, commands) ? 1 : 2;
    if (known[id] === 1) continue;
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
