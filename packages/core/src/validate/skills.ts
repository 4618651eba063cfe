/**
 * `unknown-command` (4.4): only when a skills description is known. `assign` is built in;
 * `final_answer` and `cannot_complete` are reserved and always known.
 */
import type { Plan } from '../ast';
import type { Diagnostic } from '../diagnostics/diagnostic';
import { didYouMean, suggest } from './suggest';

/** Commands every plan may use whatever the skills description says. */
export const BUILTIN_COMMANDS: readonly string[] = ['assign', 'final_answer', 'cannot_complete'];

/** A skills description: command name to its description (contract.md). */
export type SkillsDescription = Readonly<Record<string, string>>;

/** True when `command` is known to a plan with this description. */
export function isKnownCommand(command: string, skills: SkillsDescription): boolean {
  return BUILTIN_COMMANDS.includes(command) || Object.prototype.hasOwnProperty.call(skills, command);
}

export function checkCommands(plan: Plan, skills: SkillsDescription): Diagnostic[] {
  const out: Diagnostic[] = [];
  const names = [...Object.keys(skills), ...BUILTIN_COMMANDS];
  for (const d of plan.declarations) {
    if (!d.command || isKnownCommand(d.command.name, skills)) continue;
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
