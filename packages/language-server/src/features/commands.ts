/**
 * What the server knows about commands: the command surface of the plan's workspace skills plus
 * the three commands every plan may use (`assign` and the final commands, spec 4.4), as core
 * describes them. Shared by completion and hover so both describe a command the same way.
 */
import { ASSIGN, BUILTIN_COMMANDS, builtinCommand, isFinalCommand, type CommandSpec, type Plan, type ReservedName } from '@lightsop/core';
import type { SkillsContext } from '../workspace';

/** Where a command comes from, for display. */
export type CommandOrigin = 'built-in' | 'reserved' | 'skills' | 'plan';

export function commandOrigin(command: CommandSpec): CommandOrigin {
  switch (command.source.kind) {
    case 'builtin':
      return 'built-in';
    case 'reserved':
      return 'reserved';
    case 'plan':
      return 'plan';
    default:
      return 'skills';
  }
}

/** Everything about one command name, or null when nothing is known about it. */
export function commandInfo(name: string, skills: SkillsContext): CommandSpec | null {
  // A registry that lists `assign` replaces the built-in (6.7); the final commands stay the session's.
  if (isFinalCommand(name)) return builtinCommand(name as ReservedName);
  return skills.commands?.get(name) ?? (name === ASSIGN ? builtinCommand(ASSIGN) : null);
}

/**
 * The commands to offer: the skills' commands and the built-ins; without skills, the built-ins
 * and the commands the plan already uses (so completion still helps consistency).
 */
export function availableCommands(skills: SkillsContext, plan: Plan | null): CommandSpec[] {
  const out = new Map<string, CommandSpec>();
  for (const c of skills.commands?.commands ?? []) out.set(c.name, commandInfo(c.name, skills) ?? c);
  for (const name of BUILTIN_COMMANDS) if (!out.has(name)) out.set(name, commandInfo(name, skills)!);
  if (!skills.commands && plan) {
    for (const d of plan.declarations) {
      const name = d.command?.name;
      if (name !== undefined && !out.has(name)) out.set(name, { name, description: '', reserved: false, source: { kind: 'plan' } });
    }
  }
  return [...out.values()];
}

/** Where a command comes from, as completion's detail shows it. */
export function commandDetail(command: CommandSpec, skillsSource: string | null): string {
  if (command.source.kind === 'mcp') return `MCP tool${command.source.name ? ` (server ${command.source.name})` : ''}`;
  const origin = commandOrigin(command);
  return origin === 'skills' ? `skill${skillsSource ? ` (${skillsSource})` : ''}` : origin === 'plan' ? 'used in this plan' : origin;
}

/** The command's usage line: `fs.read_file path tail? head?` (required parameters bare, optional ones with `?`). */
export function usageLine(command: CommandSpec): string {
  return [command.name, ...(command.parameters ?? []).map((p) => (p.required === false ? `${p.name}?` : p.name))].join(' ');
}

/** Markdown: the description and, when known, the parameters in order with their descriptions. */
export function commandDocumentation(command: CommandSpec): string {
  const parts: string[] = [];
  if (command.description) parts.push(command.description);
  const params = command.parameters ?? [];
  if (params.length > 0) {
    parts.push(['Arguments, in order:', ...params.map((p) => `- \`${p.name}\`${p.required === false ? ' (optional)' : p.required ? ' (required)' : ''}${p.description ? ` — ${p.description}` : ''}`)].join('\n'));
  }
  if (command.source.kind === 'mcp') {
    parts.push(command.sideEffects === false ? 'Read-only: no side effects.' : command.destructive ? 'Destructive: sessions ask every time.' : 'Has side effects: sessions ask for approval.');
  }
  return parts.join('\n\n');
}
