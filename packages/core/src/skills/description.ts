/**
 * Skills descriptions (contract.md): a JSON object mapping command names to descriptions, or
 * what a skills module exports (a registry with `listCommands`, or a skills map). Pure: hosts
 * read files and import modules; this module only interprets what they got.
 */
import { CommandSurface, readRegistryCommands, readSkillsMapCommands, type CommandSource, type SkillsDescription } from '../commands/surface';

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

/**
 * The description of a skills module's default export: a registry (`listCommands`) or a skills
 * map (`{ NAME: { description, run } }`). Throws a SkillsDescriptionError for anything else.
 */
export function describeSkillsExport(exported: unknown, source?: CommandSource): CommandSurface {
  if (isObject(exported) && typeof exported.listCommands === 'function') {
    return new CommandSurface(readRegistryCommands(exported as { listCommands(): unknown }, source));
  }
  if (isObject(exported) && !Array.isArray(exported) && Object.values(exported).every((v) => isObject(v) && typeof v.run === 'function')) {
    return new CommandSurface(readSkillsMapCommands(exported, source));
  }
  throw new SkillsDescriptionError('the default export must be a commands registry ({ listCommands, executeCommand }) or a skills map ({ NAME: { description, run } })');
}
