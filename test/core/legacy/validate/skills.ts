/**
 * `unknown-command` (4.4): only when the commands are known. `assign` is built in;
 * `final_answer` and `cannot_complete` are reserved and always known.
 */
import type { Plan } from '../../../../packages/core/src/ast';
import { BUILTIN_COMMANDS, type CommandSurface } from '../../../../packages/core/src/commands/surface';
import type { Diagnostic } from '../../../../packages/core/src/diagnostics/diagnostic';
import { didYouMean, suggest } from '../../../../packages/core/src/validate/suggest';

/** True when `command` is known to a plan with these commands. */
export function isKnownCommand(command: string, commands: CommandSurface): boolean {
  return BUILTIN_COMMANDS.includes(command) || commands.has(command);
}

export function checkCommands(plan: Plan, commands: CommandSurface): Diagnostic[] {
  const out: Diagnostic[] = [];
  let names: string[] | null = null;
  for (const d of plan.declarations) {
    if (!d.command || isKnownCommand(d.command.name, commands)) continue;
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
