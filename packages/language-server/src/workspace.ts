/**
 * The workspace model: for each workspace folder, the `lightsop.config.json` at its root and
 * the skills file it names, loaded into a skills description that plans in the folder are
 * validated against. It owns the file IO of the server and the trust decision: a JSON
 * description is always read, but a skills module (which runs code when imported) is only
 * loaded when the client has said the workspace is trusted; a refusal is reported on the
 * config file and in a message, never silently. It does not talk to the connection: the server
 * gives it a host for reporting.
 */
import { stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { describeSkillsExport, parseSkillsJson, type SkillsDescription } from '@lightsop/core';
import { CONFIG_FILE, parseConfigText, type ConfigProblem } from './config';
import { readLimitedTextFile, UnreadableFileError } from './read-limited';

/** The skills that apply to a plan; `key` changes whenever they do (it keys the analysis cache). */
export interface SkillsContext {
  readonly key: number;
  /** Null when no description is known: `unknown-command` is then not checked. */
  readonly description: SkillsDescription | null;
  /** The skills file as named in the config, for hovers; null without one. */
  readonly source: string | null;
}

/** How the workspace reports to the server. */
export interface WorkspaceHost {
  /** Diagnostics for a config file, replacing the previous ones (an empty list clears them). */
  configProblems(configUri: string, text: string, problems: readonly ConfigProblem[]): void;
  /** A message the user should see once (a refused module, an unreadable skills file). */
  notify(severity: 'error' | 'warning', message: string): void;
  /** The skills of a folder changed: open plans in it need new diagnostics. */
  skillsChanged(folderUri: string): void;
  log(message: string): void;
}

export interface FolderInfo {
  readonly uri: string;
  readonly name?: string;
}

/** The file a watcher should report, relative to a base folder. */
export interface WatchTarget {
  readonly baseUri: string;
  readonly pattern: string;
}

const NO_SKILLS: SkillsContext = { key: 0, description: null, source: null };
const MODULE_EXTENSIONS = new Set(['.mjs', '.js', '.cjs', '.ts', '.mts', '.cts']);
/** A skills module whose import never settles must not keep plans without diagnostics forever. */
const MODULE_LOAD_TIMEOUT_MS = 10_000;

interface Folder {
  readonly uri: string;
  readonly path: string;
  readonly configPath: string;
  readonly configUri: string;
  skillsPath: string | null;
  skills: SkillsContext;
  /** Settles when the latest load finished. */
  loading: Promise<void>;
  /** Bumped by every load, so a slow load that was superseded drops its result. */
  generation: number;
  /** Whether the last load published problems (so a clean load clears them). */
  hadProblems: boolean;
}

/** Converts a file URI to a path, or null for other schemes and malformed URIs. */
export function uriToPath(uri: string): string | null {
  if (!uri.startsWith('file:')) return null;
  try {
    return fileURLToPath(uri);
  } catch {
    return null;
  }
}

/** A path as compared: Windows paths are case-insensitive (and clients disagree on the drive letter's case). */
function pathKey(p: string): string {
  return process.platform === 'win32' ? p.toLowerCase() : p;
}

function isModulePath(file: string): boolean {
  return MODULE_EXTENSIONS.has(path.extname(file).toLowerCase());
}

function sameDescription(a: SkillsDescription | null, b: SkillsDescription | null): boolean {
  if (a === null || b === null) return a === b;
  const ka = Object.keys(a);
  if (ka.length !== Object.keys(b).length) return false;
  return ka.every((k) => Object.prototype.hasOwnProperty.call(b, k) && a[k] === b[k]);
}

export class Workspace {
  private folders: Folder[] = [];
  private trusted = false;
  private skillsOverride: string | null = null;
  private nextKey = 1;
  /** Messages already shown, so a refusal is announced once and not on every reload. */
  private readonly announced = new Set<string>();

  constructor(private readonly host: WorkspaceHost) {}

  get isTrusted(): boolean {
    return this.trusted;
  }

  /** Adds and removes folders; new folders start loading at once. */
  updateFolders(added: readonly FolderInfo[], removed: readonly FolderInfo[] = []): void {
    for (const r of removed) {
      const folder = this.folders.find((f) => f.uri === r.uri);
      if (!folder) continue;
      this.folders = this.folders.filter((f) => f !== folder);
      if (folder.hadProblems) this.host.configProblems(folder.configUri, '', []);
      this.host.skillsChanged(folder.uri);
    }
    for (const a of added) {
      const dir = uriToPath(a.uri);
      if (dir === null || this.folders.some((f) => f.uri === a.uri)) continue;
      const configPath = path.join(dir, CONFIG_FILE);
      const folder: Folder = {
        uri: a.uri,
        path: dir,
        configPath,
        configUri: pathToFileURL(configPath).href,
        skillsPath: null,
        skills: NO_SKILLS,
        loading: Promise.resolve(),
        generation: 0,
        hadProblems: false,
      };
      this.folders.push(folder);
      this.reload(folder);
    }
  }

  /** Changes the trust decision; every folder is reloaded, since modules may now load or not. */
  setTrusted(trusted: boolean): void {
    if (trusted === this.trusted) return;
    this.trusted = trusted;
    this.announced.clear();
    for (const folder of this.folders) this.reload(folder);
  }

  /**
   * A skills file chosen by the client (VS Code's `lightsop.skills` setting) in place of each
   * folder config's `skills`; relative paths are relative to the folder. Null goes back to the
   * configs. A module is still only imported in a trusted workspace.
   */
  setSkillsOverride(skills: string | null): void {
    const value = skills && skills.trim() !== '' ? skills : null;
    if (value === this.skillsOverride) return;
    this.skillsOverride = value;
    this.announced.clear();
    for (const folder of this.folders) this.reload(folder);
  }

  /** The skills for a document (none outside every folder). */
  skillsFor(uri: string): SkillsContext {
    return this.folderFor(uri)?.skills ?? NO_SKILLS;
  }

  /** Settles once the folder of `uri` has loaded its config (at once outside every folder). */
  async ready(uri: string): Promise<void> {
    const folder = this.folderFor(uri);
    if (!folder) return;
    // A reload may start while we wait; wait for the latest one.
    let seen: Promise<void> | null = null;
    while (folder.loading !== seen) {
      seen = folder.loading;
      await seen;
    }
  }

  /** Settles once every folder has loaded. */
  async allReady(): Promise<void> {
    await Promise.all(this.folders.map((f) => this.ready(f.uri)));
  }

  /**
   * Files changed on disk (from `workspace/didChangeWatchedFiles`): reloads each folder whose
   * config or skills file is among them. Returns when those reloads finished.
   */
  async filesChanged(uris: readonly string[]): Promise<void> {
    const paths = new Set(uris.map(uriToPath).filter((p): p is string => p !== null).map((p) => pathKey(path.resolve(p))));
    const affected = this.folders.filter((f) => paths.has(pathKey(f.configPath)) || (f.skillsPath !== null && paths.has(pathKey(f.skillsPath))));
    for (const folder of affected) this.reload(folder);
    await Promise.all(affected.map((f) => this.ready(f.uri)));
  }

  /** What file watchers should report: each folder's config file and skills file. */
  watchTargets(): WatchTarget[] {
    const out: WatchTarget[] = [];
    for (const f of this.folders) {
      out.push({ baseUri: f.uri, pattern: CONFIG_FILE });
      if (f.skillsPath === null) continue;
      const rel = path.relative(f.path, f.skillsPath);
      if (rel !== '' && !rel.startsWith('..') && !path.isAbsolute(rel)) out.push({ baseUri: f.uri, pattern: rel.split(path.sep).join('/') });
      else out.push({ baseUri: pathToFileURL(path.dirname(f.skillsPath)).href, pattern: path.basename(f.skillsPath) });
    }
    return out;
  }

  /** The innermost folder containing `uri`. */
  private folderFor(uri: string): Folder | null {
    const found = uriToPath(uri);
    if (found === null) return null;
    const file = pathKey(found);
    let best: Folder | null = null;
    for (const f of this.folders) {
      const dir = pathKey(f.path);
      const inside = file === dir || file.startsWith(dir.endsWith(path.sep) ? dir : dir + path.sep);
      if (inside && (!best || f.path.length > best.path.length)) best = f;
    }
    return best;
  }

  private reload(folder: Folder): void {
    const generation = ++folder.generation;
    const previous = folder.loading;
    folder.loading = previous.then(() => this.load(folder, generation)).catch((error: unknown) => {
      this.host.log(`lightsop: loading ${folder.configPath} failed: ${(error as Error)?.stack ?? String(error)}`);
    });
  }

  private async load(folder: Folder, generation: number): Promise<void> {
    if (generation !== folder.generation) return; // a newer reload is queued behind this one
    let text: string | null;
    try {
      text = await readLimitedTextFile(folder.configPath);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (error instanceof UnreadableFileError) this.announce('error', `${folder.configPath}: cannot read (${error.reason})`);
      else if (code !== 'ENOENT' && code !== 'ENOTDIR') {
        this.announce('error', `${folder.configPath}: cannot read (${code ?? (error as Error).message})`);
      }
      text = null;
    }
    const problems: ConfigProblem[] = [];
    let description: SkillsDescription | null = null;
    let source: string | null = null;
    let skillsPath: string | null = null;
    if (text !== null) {
      const parsed = parseConfigText(text);
      for (const problem of parsed.problems) problems.push(problem);
      const config = parsed.config;
      if (config?.skills && this.skillsOverride === null) {
        skillsPath = path.resolve(folder.path, config.skills);
        source = config.skills;
        const loaded = await this.loadSkills(skillsPath, config.skills);
        if ('description' in loaded) description = loaded.description;
        else {
          problems.push({ code: 'skills-not-loaded', severity: loaded.severity, message: loaded.problem, span: config.skillsSpan! });
          if (loaded.announce) this.announce(loaded.severity, loaded.problem);
        }
      }
    }
    if (this.skillsOverride !== null) {
      // The client's setting wins over the config; its problems have no place in the config file.
      skillsPath = path.resolve(folder.path, this.skillsOverride);
      source = this.skillsOverride;
      const loaded = await this.loadSkills(skillsPath, this.skillsOverride);
      if ('description' in loaded) description = loaded.description;
      else this.announce(loaded.severity, loaded.problem);
    }
    if (generation !== folder.generation) return;
    folder.skillsPath = skillsPath;
    if (problems.length > 0 || folder.hadProblems) this.host.configProblems(folder.configUri, text ?? '', problems);
    folder.hadProblems = problems.length > 0;
    if (!sameDescription(folder.skills.description, description) || folder.skills.source !== source) {
      folder.skills = { key: this.nextKey++, description, source };
      this.host.skillsChanged(folder.uri);
    }
  }

  /** Loads a skills description from a JSON file, or from a module when the workspace is trusted. */
  private async loadSkills(file: string, written: string): Promise<
    { description: SkillsDescription } | { problem: string; severity: 'error' | 'warning'; announce: boolean }
  > {
    if (isModulePath(file)) {
      if (!this.trusted) {
        return {
          problem: `Skills module '${written}' was not loaded: importing it would run its code, and this workspace is not trusted. ` +
            'Commands are not checked until the workspace is trusted.',
          severity: 'warning',
          announce: true,
        };
      }
      return this.importSkillsModule(file, written);
    }
    let text: string;
    try {
      text = await readLimitedTextFile(file);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const reason = error instanceof UnreadableFileError ? error.reason : code ?? (error as Error).message;
      return {
        problem: code === 'ENOENT' ? `Skills file '${written}' does not exist` : `Skills file '${written}' cannot be read (${reason})`,
        severity: 'error',
        announce: false,
      };
    }
    try {
      return { description: parseSkillsJson(text.charCodeAt(0) === 0xfeff ? text.slice(1) : text) };
    } catch (error) {
      return { problem: `Skills file '${written}': ${(error as Error).message}`, severity: 'error', announce: false };
    }
  }

  private async importSkillsModule(file: string, written: string): Promise<
    { description: SkillsDescription } | { problem: string; severity: 'error'; announce: boolean }
  > {
    let version: number;
    try {
      version = (await stat(file)).mtimeMs;
    } catch {
      return { problem: `Skills module '${written}' does not exist`, severity: 'error', announce: false };
    }
    // ES modules are cached by URL, so the modification time in the query loads an edited module
    // again; CommonJS modules are cached by path and are dropped from the require cache instead.
    try {
      delete createRequire(file).cache[file];
    } catch {
      // Not a CommonJS module, or no require cache here: nothing to drop.
    }
    const url = `${pathToFileURL(file).href}?mtime=${version}`;
    let timer: NodeJS.Timeout | undefined;
    try {
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`importing it took more than ${MODULE_LOAD_TIMEOUT_MS / 1000} s`)), MODULE_LOAD_TIMEOUT_MS);
      });
      const mod = (await Promise.race([import(url), timeout])) as { default?: unknown };
      return { description: describeSkillsExport(mod.default ?? mod) };
    } catch (error) {
      return { problem: `Skills module '${written}' cannot be loaded: ${(error as Error)?.message ?? String(error)}`, severity: 'error', announce: true };
    } finally {
      clearTimeout(timer);
    }
  }

  private announce(severity: 'error' | 'warning', message: string): void {
    if (this.announced.has(message)) return;
    this.announced.add(message);
    this.host.notify(severity, message);
  }
}
