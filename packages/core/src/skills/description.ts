/**
 * JSON skills descriptions (contract.md): an object mapping command names to descriptions. Pure:
 * the runtime's skills loader reads the file; this module only interprets its text.
 */
import type { SkillsDescription } from '../commands/surface';

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
