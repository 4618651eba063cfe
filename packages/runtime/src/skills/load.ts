/**
 * Loading skills from files: a JSON skills description, or an ES module whose default export is
 * a registry or a skills map. Importing a module runs its code, so hosts call `loadSkillsFile`
 * with `allowModules: false` for untrusted workspaces.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseSkillsJson, type SkillsDescription } from '@lightsop/core';
import { readLimitedTextFile, UnreadableFileError } from './read-limited';
import { describeRegistry, toCommandRegistry, type CommandRegistry } from './registry';

export interface LoadedSkills {
  readonly file: string;
  readonly description: SkillsDescription;
  /** Set for modules; JSON descriptions cannot execute anything. */
  readonly registry: CommandRegistry | null;
}

/** A problem with a skills file, with the file (and field) it is about. */
export class SkillsLoadError extends Error {
  constructor(readonly file: string, message: string) {
    super(message);
    this.name = 'SkillsLoadError';
  }
}

const MODULE_EXTENSIONS = new Set(['.mjs', '.js', '.cjs', '.ts', '.mts']);

/** True when the file is loaded by importing it (and so runs code). */
export function isSkillsModule(file: string): boolean {
  return MODULE_EXTENSIONS.has(path.extname(file).toLowerCase());
}

/** Parses the text of a JSON skills description, naming the file in errors. */
export function parseSkillsDescription(text: string, file: string): SkillsDescription {
  try {
    return parseSkillsJson(text);
  } catch (error) {
    throw new SkillsLoadError(file, `${file}: ${(error as Error).message}`);
  }
}

/** Loads a skills file. Modules are refused unless `allowModules` is true. */
export async function loadSkillsFile(file: string, options: { allowModules?: boolean } = {}): Promise<LoadedSkills> {
  const absolute = path.resolve(file);
  if (isSkillsModule(absolute)) {
    if (options.allowModules === false) {
      throw new SkillsLoadError(file, `${file}: skills modules run code and are not loaded in an untrusted workspace`);
    }
    let mod: { default?: unknown };
    try {
      mod = await import(pathToFileURL(absolute).href);
    } catch (error) {
      const err = error as NodeJS.ErrnoException;
      if (err.code === 'ERR_MODULE_NOT_FOUND' && String(err.message).includes(absolute)) {
        throw new SkillsLoadError(file, `${file}: no such file`);
      }
      throw new SkillsLoadError(file, `${file}: cannot load the skills module: ${err.message ?? String(error)}`);
    }
    let registry: CommandRegistry;
    try {
      registry = toCommandRegistry(mod.default, file);
    } catch (error) {
      throw new SkillsLoadError(file, (error as Error).message);
    }
    return { file: absolute, description: describeRegistry(registry), registry };
  }
  let text: string;
  try {
    // A description from a hostile repository may be a FIFO, /dev/zero or huge: read-limited.ts.
    text = await readLimitedTextFile(absolute);
  } catch (error) {
    if (error instanceof UnreadableFileError) throw new SkillsLoadError(file, `${file}: cannot read (${error.reason})`);
    const err = error as NodeJS.ErrnoException;
    throw new SkillsLoadError(file, err.code === 'ENOENT' ? `${file}: no such file` : `${file}: cannot read (${err.code ?? err.message})`);
  }
  return { file: absolute, description: parseSkillsDescription(text, file), registry: null };
}
