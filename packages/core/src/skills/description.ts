/**
 * Skills descriptions (contract.md): a JSON object mapping command names to descriptions, or
 * what a skills module exports (a registry with `listCommands`, or a skills map). Pure: hosts
 * read files and import modules; this module only interprets what they got.
 */
import type { SkillsDescription } from '../validate/skills';

/** A problem with a skills description; `field` names the offending entry when there is one. */
export class SkillsDescriptionError extends Error {
  constructor(message: string, readonly field?: string) {
    super(message);
    this.name = 'SkillsDescriptionError';
  }
}

/** Parses the text of a JSON skills description (`{ "name": "description" }`; `{ "name": { "description" } }` is accepted too). */
export function parseSkillsJson(text: string): SkillsDescription {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new SkillsDescriptionError(`invalid JSON (${(error as Error).message})`);
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new SkillsDescriptionError('a skills description must be a JSON object mapping command names to descriptions');
  }
  const out: Record<string, string> = {};
  for (const [name, desc] of Object.entries(value)) {
    if (typeof desc === 'string') out[name] = desc;
    else if (typeof desc === 'object' && desc !== null && typeof (desc as { description?: unknown }).description === 'string') {
      out[name] = (desc as { description: string }).description;
    } else {
      throw new SkillsDescriptionError(`field "${name}" must be a string (the command's description)`, name);
    }
  }
  return out;
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

/** One command a registry lists. */
export interface ListedCommand {
  name: string;
  description: string;
  /** Present when the registry says whether the command has side effects. */
  sideEffects?: boolean;
}

/**
 * The commands a registry lists (`{ name, description, sideEffects? }`; `command` is accepted for
 * `name`; unusable entries are ignored; a throwing `listCommands` counts as an empty list).
 */
export function listedCommands(registry: { listCommands(): unknown }): ListedCommand[] {
  let raw: unknown;
  try {
    raw = registry.listCommands();
  } catch {
    return [];
  }
  const out: ListedCommand[] = [];
  // The list comes from a skills module: its iteration or an entry's getters may throw. An entry
  // that cannot be read is unusable, and a list that cannot be walked ends where it broke.
  try {
    if (!Array.isArray(raw)) return [];
    for (const entry of raw) {
      try {
        if (!isObject(entry)) continue;
        const name = entry.name || entry.command;
        if (typeof name !== 'string' || !name.trim()) continue;
        const command: ListedCommand = { name, description: typeof entry.description === 'string' ? entry.description : '' };
        if (typeof entry.sideEffects === 'boolean') command.sideEffects = entry.sideEffects;
        out.push(command);
      } catch {
        // An unreadable entry is ignored like any other unusable one.
      }
    }
  } catch {
    // Iterating the list threw: keep the entries read so far.
  }
  return out;
}

/**
 * The description of a skills module's default export: a registry (`listCommands`) or a skills
 * map (`{ NAME: { description, run } }`). Throws a SkillsDescriptionError for anything else.
 */
export function describeSkillsExport(exported: unknown): SkillsDescription {
  if (isObject(exported) && typeof exported.listCommands === 'function') {
    const out: Record<string, string> = {};
    for (const c of listedCommands(exported as { listCommands(): unknown })) out[c.name] = c.description;
    return out;
  }
  if (isObject(exported) && !Array.isArray(exported) && Object.values(exported).every((v) => isObject(v) && typeof v.run === 'function')) {
    const out: Record<string, string> = {};
    for (const [name, skill] of Object.entries(exported)) out[name] = String((skill as { description?: unknown }).description ?? '');
    return out;
  }
  throw new SkillsDescriptionError('the default export must be a commands registry ({ listCommands, executeCommand }) or a skills map ({ NAME: { description, run } })');
}
