/**
 * Loading skills from files: a JSON skills description, or an ES module whose default export is
 * a registry or a skills map. Importing a module runs its code, so hosts call `loadSkillsFile`
 * with `allowModules: false` for untrusted workspaces.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseSkillsJson, type SkillsDescription } from '@lightsop/core';
import { errorText } from '../values';
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

/** A skills module whose loading (its top-level code) did not finish within the time limit. */
export class SkillsLoadTimeoutError extends SkillsLoadError {
  constructor(file: string, readonly timeoutMs: number) {
    super(file, `${file}: the skills module did not finish loading within ${timeoutMs / 1000} s`);
    this.name = 'SkillsLoadTimeoutError';
  }
}

export interface LoadSkillsOptions {
  /** False refuses modules (an untrusted workspace): importing one runs its code. */
  readonly allowModules?: boolean;
  /**
   * The longest wait, in milliseconds, for a module's top-level code to finish (a top-level await
   * may wait for ever). Unlimited by default. The timer does not keep the process alive by itself.
   */
  readonly timeoutMs?: number;
}

/** Settles like `promise`, or rejects with `late()` after `ms`; the timer never keeps the process alive. */
function within<T>(promise: Promise<T>, ms: number, late: () => Error): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const timer = setTimeout(() => reject(late()), ms);
    timer.unref?.();
    promise.then(
      (value) => {
        clearTimeout(timer);
        resolve(value);
      },
      (error: unknown) => {
        clearTimeout(timer);
        reject(error);
      },
    );
  });
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

/** Loads a skills file. Modules are refused when `allowModules` is false. */
export async function loadSkillsFile(file: string, options: LoadSkillsOptions = {}): Promise<LoadedSkills> {
  const absolute = path.resolve(file);
  if (isSkillsModule(absolute)) {
    if (options.allowModules === false) {
      throw new SkillsLoadError(file, `${file}: skills modules run code and are not loaded in an untrusted workspace`);
    }
    let mod: { default?: unknown };
    const timeoutMs = options.timeoutMs;
    try {
      const loading = import(pathToFileURL(absolute).href) as Promise<{ default?: unknown }>;
      mod = timeoutMs === undefined ? await loading : await within(loading, timeoutMs, () => new SkillsLoadTimeoutError(file, timeoutMs));
    } catch (error) {
      if (error instanceof SkillsLoadTimeoutError) throw error;
      // The module's top-level code may throw anything at all: read it without trusting it.
      const message = errorText(error);
      let notFound = false;
      try {
        notFound = (error as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND';
      } catch {
        // A hostile thrown value: not Node's error.
      }
      if (notFound && message.includes(absolute)) throw new SkillsLoadError(file, `${file}: no such file`);
      throw new SkillsLoadError(file, `${file}: cannot load the skills module: ${message}`);
    }
    let registry: CommandRegistry;
    try {
      registry = toCommandRegistry(mod.default, file);
    } catch (error) {
      throw new SkillsLoadError(file, errorText(error));
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
