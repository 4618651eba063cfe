/**
 * The one skills loader, used by the CLI, the language server and the extension: a JSON skills
 * description, or a skills module. It owns the three rules every host applies the same way:
 *
 * - **What a module may export.** Its default export, when it has one, is a commands registry or
 *   a skills map. A module without a default export may export its skills by name
 *   (`export const greet = { description, run }`): its named exports, taken together, are then the
 *   skills map. Anything else is refused with one message.
 * - **Cache busting.** A module is imported with its modification time and size in the URL (Node
 *   caches ES modules by URL for the life of the process), and a CommonJS module is dropped from
 *   the require cache first, so an edited module is the one that loads next in a long-lived host.
 * - **One timeout.** A module's top-level code gets LIGHTSOP_SKILLS_TIMEOUT (30 s by default) to
 *   finish; a module still loading then is an error naming it, never a hang.
 *
 * Importing a module runs its code, so hosts pass `allowModules: false` for untrusted workspaces.
 * This module imports nothing of the interpreter: the language server may import it (through
 * `@lightsop/runtime/skills`).
 */
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { CommandSurface, parseDurationMs, parseSkillsJson } from '@lightsop/core';
import { errorText } from '../values';
import { readLimitedTextFile, UnreadableFileError } from './read-limited';
import { commandRegistryProblem, isSkillsMap, registryFromSkillsMap, toCommandRegistry, type CommandRegistry, type SkillsMap } from './registry';

export interface LoadedSkills {
  readonly file: string;
  /** The commands the file provides. */
  readonly commands: CommandSurface;
  /** Set for modules; JSON descriptions cannot execute anything. */
  readonly registry: CommandRegistry | null;
}

/**
 * What went wrong: `missing` (no such file), `unreadable` (not a regular file, too large, no
 * permission), `invalid` (a JSON description that is not one), `refused` (a module where modules
 * are not allowed), `failed` (the module threw or could not be imported), `exports` (it exports
 * no registry or skills map), `timeout` (still loading after the limit).
 */
export type SkillsLoadProblem = 'missing' | 'unreadable' | 'invalid' | 'refused' | 'failed' | 'exports' | 'timeout';

/** A problem with a skills file: the message is `FILE: REASON`; hosts that name the file their own way show `reason`. */
export class SkillsLoadError extends Error {
  constructor(readonly file: string, readonly reason: string, readonly problem: SkillsLoadProblem) {
    super(`${file}: ${reason}`);
    this.name = 'SkillsLoadError';
  }
}

/** A skills module whose loading (its top-level code) did not finish within the time limit. */
export class SkillsLoadTimeoutError extends SkillsLoadError {
  constructor(file: string, readonly timeoutMs: number) {
    super(file, `the skills module did not finish loading within ${timeoutMs / 1000} s (LIGHTSOP_SKILLS_TIMEOUT sets the limit)`, 'timeout');
    this.name = 'SkillsLoadTimeoutError';
  }
}

/** How long a skills module may take to load when LIGHTSOP_SKILLS_TIMEOUT is not set. */
export const DEFAULT_SKILLS_TIMEOUT_MS = 30_000;

/** LIGHTSOP_SKILLS_TIMEOUT is set to something that is not a duration. */
export class SkillsTimeoutSettingError extends Error {
  constructor() {
    super('LIGHTSOP_SKILLS_TIMEOUT: expected a positive duration such as 30, 30s, 500ms or 2m, of at most 24 days');
    this.name = 'SkillsTimeoutSettingError';
  }
}

/** The time a module's top-level code gets: LIGHTSOP_SKILLS_TIMEOUT, else 30 s. Throws SkillsTimeoutSettingError for a bad value. */
export function skillsLoadTimeoutMs(env: Readonly<Record<string, string | undefined>> = process.env): number {
  const value = env.LIGHTSOP_SKILLS_TIMEOUT;
  if (value === undefined || value.trim() === '') return DEFAULT_SKILLS_TIMEOUT_MS;
  const ms = parseDurationMs(value);
  if (ms === null) throw new SkillsTimeoutSettingError();
  return ms;
}

export interface LoadSkillsOptions {
  /** False refuses modules (an untrusted workspace): importing one runs its code. */
  readonly allowModules?: boolean;
  /**
   * The longest wait, in milliseconds, for a module's top-level code to finish (a top-level await
   * may wait for ever). Default: `skillsLoadTimeoutMs()`. The timer never keeps the process alive.
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

const MODULE_EXTENSIONS = new Set(['.mjs', '.js', '.cjs', '.ts', '.mts', '.cts']);

/** True when the file is loaded by importing it (and so runs code). */
export function isSkillsModule(file: string): boolean {
  return MODULE_EXTENSIONS.has(path.extname(file).toLowerCase());
}

function isObject(x: unknown): x is Record<string, unknown> {
  return typeof x === 'object' && x !== null;
}

/**
 * The registry a module's namespace provides, by the one rule: the default export when there is
 * one, else the named exports as a skills map. Throws a SkillsLoadError saying what to export.
 */
export function registryFromModule(namespace: unknown, file: string): CommandRegistry {
  const mod = isObject(namespace) ? namespace : {};
  if (Object.prototype.hasOwnProperty.call(mod, 'default')) {
    const problem = commandRegistryProblem(mod.default);
    if (problem !== null) throw new SkillsLoadError(file, problem, 'exports');
    return toCommandRegistry(mod.default, file);
  }
  const named: Record<string, unknown> = {};
  for (const name of Object.keys(mod)) named[name] = mod[name];
  const names = Object.keys(named);
  if (names.length > 0 && isSkillsMap(named)) return registryFromSkillsMap(named as SkillsMap, { kind: 'skills-map', name: file });
  const listed = names.length === 0 ? 'it exports nothing' : `it exports ${names.slice(0, 5).join(', ')}${names.length > 5 ? ', ...' : ''}`;
  throw new SkillsLoadError(
    file,
    `a skills module must export a commands registry ({ listCommands, executeCommand }) or a skills map ({ NAME: { description, run } }) as its default export, or its skills ({ description, run }) as named exports; ${listed}`,
    'exports',
  );
}

let importUrl: (url: string) => Promise<unknown> = (url) => import(url);

/**
 * Replaces how skills modules are imported: for a host whose code Node's module loader did not
 * compile (the CLI's lint bundle runs from a V8 code cache, where `import()` has no loader), the
 * entry that Node did load passes its own `import`.
 */
export function setModuleImporter(importer: (url: string) => Promise<unknown>): void {
  importUrl = importer;
}

/** Imports a module afresh when it changed since the last import in this process. */
async function importModule(absolute: string, file: string, timeoutMs: number): Promise<unknown> {
  let version: string;
  try {
    const s = await stat(absolute);
    version = `${s.mtimeMs}-${s.size}`;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') throw new SkillsLoadError(file, 'no such file', 'missing');
    throw new SkillsLoadError(file, `cannot read (${code ?? errorText(error)})`, 'unreadable');
  }
  // CommonJS modules are cached by path, whatever the URL says: drop the stale entry.
  try {
    delete createRequire(absolute).cache[absolute];
  } catch {
    // No require cache here: nothing to drop.
  }
  const loading = importUrl(`${pathToFileURL(absolute).href}?v=${version}`);
  try {
    return await within(loading, timeoutMs, () => new SkillsLoadTimeoutError(file, timeoutMs));
  } catch (error) {
    if (error instanceof SkillsLoadTimeoutError) throw error;
    // The module's top-level code may throw anything at all: read it without trusting it.
    throw new SkillsLoadError(file, `cannot load the skills module: ${errorText(error)}`, 'failed');
  }
}

/** Parses the text of a JSON skills description (a leading byte order mark is allowed), naming the file in errors. */
export function parseSkillsDescription(text: string, file: string): CommandSurface {
  try {
    return CommandSurface.fromDescription(parseSkillsJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text), { kind: 'description', name: file });
  } catch (error) {
    throw new SkillsLoadError(file, (error as Error).message, 'invalid');
  }
}

/**
 * Loads a skills file; `file` is how errors name it. Modules are refused when `allowModules` is
 * false. Every problem is a SkillsLoadError (or SkillsTimeoutSettingError for a bad
 * LIGHTSOP_SKILLS_TIMEOUT).
 */
export async function loadSkillsFile(file: string, options: LoadSkillsOptions = {}): Promise<LoadedSkills> {
  const absolute = path.resolve(file);
  if (isSkillsModule(absolute)) {
    if (options.allowModules === false) {
      throw new SkillsLoadError(file, 'skills modules run code and are not loaded in an untrusted workspace', 'refused');
    }
    const namespace = await importModule(absolute, file, options.timeoutMs ?? skillsLoadTimeoutMs());
    const registry = registryFromModule(namespace, file);
    return { file: absolute, commands: CommandSurface.fromRegistry(registry, { kind: 'registry', name: file }), registry };
  }
  let text: string;
  try {
    // A description from a hostile repository may be a FIFO, /dev/zero or huge: read-limited.ts.
    text = await readLimitedTextFile(absolute);
  } catch (error) {
    if (error instanceof UnreadableFileError) throw new SkillsLoadError(file, `cannot read (${error.reason})`, 'unreadable');
    const err = error as NodeJS.ErrnoException;
    if (err.code === 'ENOENT' || err.code === 'ENOTDIR') throw new SkillsLoadError(file, 'no such file', 'missing');
    throw new SkillsLoadError(file, `cannot read (${err.code ?? err.message})`, 'unreadable');
  }
  return { file: absolute, commands: parseSkillsDescription(text, file), registry: null };
}
