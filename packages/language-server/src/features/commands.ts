/**
 * What the server knows about commands: the skills description of the plan's workspace plus
 * the three commands every plan may use (`assign`, `final_answer`, `cannot_complete`, spec 4.4).
 * Shared by completion and hover so both describe a command the same way.
 */
import { BUILTIN_COMMANDS, type Plan } from '@lightsop/core';
import type { SkillsContext } from '../workspace';

export interface CommandInfo {
  readonly name: string;
  readonly description: string;
  /** Where the command comes from, for display. */
  readonly origin: 'built-in' | 'reserved' | 'skills' | 'plan';
}

/** Descriptions of the commands every plan may use (spec 4.4, 6.7). */
export const BUILTIN_DESCRIPTIONS: Readonly<Record<string, string>> = {
  assign: 'Built-in. Joins its arguments with single spaces and succeeds with the text; with no argument, the empty string. With no header argument, the lines below may hold a here-doc (`--begin-T--` … `--end-T--`).',
  final_answer: "Reserved. Declares the plan's answer for the user: its first argument, as text.",
  cannot_complete: 'Reserved. Ends the plan without an answer; its first argument is the reason.',
};

/** Everything about one command name, or null when nothing is known about it. */
export function commandInfo(name: string, skills: SkillsContext): CommandInfo | null {
  // A registry that lists `assign` replaces the built-in (6.7); the reserved names stay the session's.
  const reserved = name === 'final_answer' || name === 'cannot_complete';
  if (!reserved && skills.description && hasOwn(skills.description, name)) {
    return { name, description: skills.description[name]!, origin: 'skills' };
  }
  if (hasOwn(BUILTIN_DESCRIPTIONS, name)) {
    return { name, description: BUILTIN_DESCRIPTIONS[name]!, origin: reserved ? 'reserved' : 'built-in' };
  }
  return null;
}

function hasOwn(obj: object, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(obj, key);
}

/**
 * The commands to offer: the skills description and the built-ins; without a description, the
 * built-ins and the commands the plan already uses (so completion still helps consistency).
 */
export function availableCommands(skills: SkillsContext, plan: Plan | null): CommandInfo[] {
  const out = new Map<string, CommandInfo>();
  if (skills.description) {
    for (const [name, description] of Object.entries(skills.description)) {
      const info = commandInfo(name, skills);
      out.set(name, info ?? { name, description, origin: 'skills' });
    }
  }
  for (const name of BUILTIN_COMMANDS) if (!out.has(name)) out.set(name, commandInfo(name, skills)!);
  if (!skills.description && plan) {
    for (const d of plan.declarations) {
      if (d.command && !out.has(d.command.name)) out.set(d.command.name, { name: d.command.name, description: '', origin: 'plan' });
    }
  }
  return [...out.values()];
}
