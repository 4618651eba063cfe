/**
 * The workspace model: for each workspace folder, the `lightsop.config.json` at its root and
 * the skills file it names, loaded into a skills description that plans in the folder are
 * validated against. It owns the file IO of the server and the trust decision: a JSON
 * description is always read, but a skills module (which runs code when imported) is only
 * loaded when the client has said the workspace is trusted; a refusal is reported on the
 * config file and in a message, never silently. It does not talk to the connection: the server
 * gives it a host for reporting.
 */
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { CommandSurface } from '@lightsop/core';
import { FolderMcpServers } from './mcp-servers';
import { CONFIG_FILE, parseConfigText, type ConfigProblem } from './config';
import { isSkillsModule, loadSkillsFile, readLimitedTextFile, SkillsLoadError, UnreadableFileError } from '@lightsop/runtime/skills';

/** The skills that apply to a plan; `key` changes whenever they do (it keys the analysis cache). */
export interface SkillsContext {
  readonly key: number;
  /** Null when no commands are known: `unknown-command` is then not checked. */
  readonly commands: CommandSurface | null;
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

const NO_SKILLS: SkillsContext = { key: 0, commands: null, source: null };

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
  /** The config's MCP servers (started only in a trusted workspace). */
  readonly mcp: FolderMcpServers;
  /** What the last load found, before the MCP tools are added: the skills' commands, the config's text and problems. */
  base: { commands: CommandSurface | null; source: string | null; text: string; problems: ConfigProblem[] };
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

function sameCommands(a: CommandSurface | null, b: CommandSurface | null): boolean {
  return a === null || b === null ? a === b : a.sameAs(b);
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
      void folder.mcp.close();
      if (folder.hadProblems) this.host.configProblems(folder.configUri, '', []);
      this.host.skillsChanged(folder.uri);
    }
    for (const a of added) {
      const dir = uriToPath(a.uri);
      if (dir === null || this.folders.some((f) => f.uri === a.uri)) continue;
      const configPath = path.join(dir, CONFIG_FILE);
      let folder: Folder;
      const mcp = new FolderMcpServers(dir, () => this.publish(folder), (message) => this.host.log(message));
      folder = {
        uri: a.uri,
        path: dir,
        configPath,
        configUri: pathToFileURL(configPath).href,
        skillsPath: null,
        skills: NO_SKILLS,
        loading: Promise.resolve(),
        generation: 0,
        hadProblems: false,
        mcp,
        base: { commands: null, source: null, text: '', problems: [] },
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
    let commands: CommandSurface | null = null;
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
        if ('commands' in loaded) commands = loaded.commands;
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
      if ('commands' in loaded) commands = loaded.commands;
      else this.announce(loaded.severity, loaded.problem);
    }
    if (generation !== folder.generation) return;
    folder.skillsPath = skillsPath;
    // MCP servers run code of the workspace: only in a trusted one, and never awaited here.
    const servers = text !== null ? parseConfigText(text).config?.mcpServers ?? [] : [];
    if (this.trusted) folder.mcp.configure(servers);
    else {
      void folder.mcp.close();
      for (const s of servers) {
        problems.push({
          code: 'invalid-config', severity: 'warning', span: s.span,
          message: `MCP server "${s.name}" was not started: it would run code, and this workspace is not trusted. Its tools are not checked until the workspace is trusted.`,
        });
      }
      if (servers.length > 0) this.announce('warning', 'MCP servers of lightsop.config.json are not started: this workspace is not trusted.');
    }
    folder.base = { commands, source, text: text ?? '', problems };
    this.publish(folder);
  }

  /** Publishes a folder's config problems and commands: the skills' commands and its MCP servers' tools. */
  private publish(folder: Folder): void {
    if (!this.folders.includes(folder)) return;
    const base = folder.base;
    const problems = [...base.problems, ...folder.mcp.problems()];
    let commands = base.commands;
    if (folder.mcp.size > 0) {
      const skills = base.commands;
      const tools = folder.mcp.commands((name) => skills?.has(name) ?? false);
      commands = new CommandSurface([skills?.commands ?? [], tools], { unlistedPrefixes: folder.mcp.unlistedPrefixes() });
    }
    if (problems.length > 0 || folder.hadProblems) this.host.configProblems(folder.configUri, base.text, problems);
    folder.hadProblems = problems.length > 0;
    if (!sameCommands(folder.skills.commands, commands) || folder.skills.source !== base.source) {
      folder.skills = { key: this.nextKey++, commands, source: base.source };
      this.host.skillsChanged(folder.uri);
    }
  }

  /** Stops every MCP server (the workspace shuts down). */
  async dispose(): Promise<void> {
    await Promise.all(this.folders.map((f) => f.mcp.close()));
  }

  /**
   * Loads a skills file with the runtime's one skills loader: a JSON description always, a
   * module only when the workspace is trusted.
   */
  private async loadSkills(file: string, written: string): Promise<
    { commands: CommandSurface } | { problem: string; severity: 'error' | 'warning'; announce: boolean }
  > {
    const isModule = isSkillsModule(file);
    if (isModule && !this.trusted) {
      return {
        problem: `Skills module '${written}' was not loaded: importing it would run its code, and this workspace is not trusted. ` +
          'Commands are not checked until the workspace is trusted.',
        severity: 'warning',
        announce: true,
      };
    }
    try {
      return { commands: (await loadSkillsFile(file)).commands };
    } catch (error) {
      const reason = error instanceof SkillsLoadError ? error.reason : (error as Error)?.message ?? String(error);
      // A module that fails is announced (it may fail on every reload); a bad file is shown on the config.
      return { problem: `Skills ${isModule ? 'module' : 'file'} '${written}': ${reason}`, severity: 'error', announce: isModule && (error as SkillsLoadError).problem !== 'missing' };
    }
  }

  private announce(severity: 'error' | 'warning', message: string): void {
    if (this.announced.has(message)) return;
    this.announced.add(message);
    this.host.notify(severity, message);
  }
}
