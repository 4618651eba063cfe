/**
 * The workspace `lightsop mcp` serves: one root folder, its `lightsop.config.json` (read again on
 * every request, so edits apply), its skills (the `--skills` flag, else the config's, loaded by the
 * runtime's one skills loader exactly as `lightsop run` and `lint` load them: the config is the
 * user's own) and its plans. Every file a client names is read through the sessions' workspace
 * confinement (`readWorkspaceFile`): a path outside the root, directly, through `..` or through a
 * symbolic link, is refused, and so are FIFOs, devices and files with several hard links.
 */
import { realpathSync } from 'node:fs';
import path from 'node:path';
import { ASSIGN, builtinCommand, CommandSurface, type CommandSpec } from '@lightsop/core';
import type { CommandRegistry } from '@lightsop/runtime';
import { withMcpTools, type McpProgressListener } from '@lightsop/runtime/mcp';
import { loadSkillsFile, SkillsLoadError, SkillsTimeoutSettingError, type LoadedSkills } from '@lightsop/runtime';
import { readWorkspaceFile, WorkspacePathError } from '@lightsop/sessions';
import { findConfig, type Config } from '../config';
import { CliError } from '../errors';
import { expandConfigGlobs, expandFolder } from '../files';
import { WorkspaceMcpServers, type McpProblem, type WorkspaceMcp } from './mcp-tools';

/** The most a plan (text argument or file) may hold: 4 Mi characters. */
export const MAX_PLAN_CHARS = 4 * 1024 * 1024;
/** The most plans the plans resource lists. */
export const MAX_LISTED_PLANS = 1000;

/** What the client asked cannot be done: the message is the tool error's text. */
export class ToolInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ToolInputError';
  }
}

function isInside(root: string, candidate: string): boolean {
  return candidate === root || candidate.startsWith(root.endsWith(path.sep) ? root : root + path.sep);
}

/** A plan of the workspace, as the plans resource lists it. */
export interface WorkspacePlan {
  /** Relative to the root, with forward slashes. */
  readonly path: string;
  readonly uri: string;
}

export const PLAN_URI_PREFIX = 'lightsop://plans/';

/** The resource URI of a workspace-relative plan path (each segment percent-encoded). */
export function planUri(relative: string): string {
  return PLAN_URI_PREFIX + relative.split('/').map(encodeURIComponent).join('/');
}

/** The workspace-relative path a plan URI names; a ToolInputError for anything else. */
export function planPathOfUri(uri: string): string {
  if (!uri.startsWith(PLAN_URI_PREFIX)) throw new ToolInputError(`${uri}: not a plan of this workspace (expected ${PLAN_URI_PREFIX}PATH)`);
  try {
    return uri.slice(PLAN_URI_PREFIX.length).split('/').map(decodeURIComponent).join('/');
  } catch {
    throw new ToolInputError(`${uri}: not a valid plan URI`);
  }
}

/** What a plan here may call, where it comes from, and the MCP servers whose tools are missing. */
export interface WorkspaceCommands {
  readonly commands: readonly CommandSpec[];
  /** The same commands as a surface (for analyzePlan), with the failed servers' prefixes unlisted. */
  readonly surface: CommandSurface;
  readonly skills: LoadedSkills | null;
  readonly mcp: WorkspaceMcp;
}

export class Workspace {
  /** The real path of the root. */
  readonly root: string;
  readonly #mcp: WorkspaceMcpServers;

  /**
   * @param root the workspace folder (must exist)
   * @param skillsFlag `--skills`, already absolute; overrides the config's
   * @param version the client version sent to the configured MCP servers
   */
  constructor(root: string, private readonly skillsFlag?: string, version = '0.0.0') {
    this.#mcp = new WorkspaceMcpServers(version);
    try {
      this.root = realpathSync.native(path.resolve(root));
    } catch {
      throw new CliError(`${root}: the workspace folder does not exist`, 3);
    }
  }

  /** The config that applies to the root, read now; an invalid one is a ToolInputError naming the file and field. */
  config(): Config | null {
    try {
      return findConfig(this.root, { fresh: true });
    } catch (error) {
      if (error instanceof CliError) throw new ToolInputError(error.message);
      throw error;
    }
  }

  /** The skills file that applies: the flag, else the config's, else none. */
  skillsPath(): string | undefined {
    return this.skillsFlag ?? this.config()?.skills;
  }

  /** The workspace's skills, or null when none is configured; problems are ToolInputErrors. */
  async skills(): Promise<LoadedSkills | null> {
    const file = this.skillsPath();
    if (!file) return null;
    try {
      return await loadSkillsFile(file);
    } catch (error) {
      const shown = path.relative(this.root, file) || file;
      if (error instanceof SkillsLoadError) throw new ToolInputError(`${shown}: ${error.reason}`);
      if (error instanceof SkillsTimeoutSettingError) throw new ToolInputError(error.message);
      throw error;
    }
  }

  /** The tools of the config's MCP servers (started on first use, docs/mcp-server.md) and their problems. */
  async mcp(): Promise<WorkspaceMcp> {
    return this.#mcp.of(this.config());
  }

  /**
   * What a plan here may call: the skills' commands, the tools of the config's MCP servers
   * (`SERVER.TOOL`; a skill wins a name both have), then the built-in `assign` (unless the skills
   * provide it), each as core's command surface describes it.
   */
  async commands(): Promise<WorkspaceCommands> {
    const skills = await this.skills();
    const mcp = await this.mcp();
    const own = skills ? skills.commands.commands : [];
    const tools = mcp.tools ? mcp.tools.commands((n) => skills?.commands.has(n) ?? false) : [];
    const unlisted = mcp.problems.map((p: McpProblem) => `${p.server}.`);
    const surface = new CommandSurface([own, tools, [builtinCommand(ASSIGN)]], { unlistedPrefixes: unlisted });
    return { commands: surface.commands, surface, skills, mcp };
  }

  /**
   * The registry run_plan runs with: the skills module's and the MCP tools (null when there are
   * neither). `onToolProgress` receives the progress notifications of the tool calls (the servers
   * are asked for progress only with it).
   */
  registry(skills: LoadedSkills | null, mcp: WorkspaceMcp, onToolProgress?: McpProgressListener): CommandRegistry | null {
    const base = skills?.registry ?? null;
    if (!mcp.tools || mcp.tools.connections.length === 0) return base;
    return withMcpTools(base, mcp.tools, onToolProgress ? { onProgress: onToolProgress } : {});
  }

  /** Stops the MCP servers this workspace started. */
  async close(): Promise<void> {
    await this.#mcp.close();
  }

  /** Reads a plan of the workspace; a path outside it, a link leading out or a special file is refused. */
  async readPlan(target: string): Promise<{ text: string; display: string }> {
    try {
      const { text, display } = await readWorkspaceFile(this.root, target, { maxBytes: MAX_PLAN_CHARS * 4 });
      if (text.length > MAX_PLAN_CHARS) throw new ToolInputError(`${display}: the plan is longer than ${MAX_PLAN_CHARS} characters`);
      return { text: text.charCodeAt(0) === 0xfeff ? text.slice(1) : text, display };
    } catch (error) {
      if (error instanceof WorkspacePathError) throw new ToolInputError(error.message);
      if (error instanceof ToolInputError) throw error;
      const code = (error as NodeJS.ErrnoException | null)?.code;
      throw new ToolInputError(`${target}: cannot read (${code ?? (error instanceof Error ? error.message : String(error))})`);
    }
  }

  /** The plans of the workspace: the config's "plans" globs, else every *.sop, only those inside the root. */
  listPlans(): WorkspacePlan[] {
    const config = this.config();
    const files = config?.plans ? expandConfigGlobs(config.plans, config.dir, this.root) : expandFolder(this.root, this.root);
    const out: WorkspacePlan[] = [];
    for (const file of files) {
      if (!file.absolute) continue;
      let real: string;
      try {
        real = realpathSync.native(file.absolute);
      } catch {
        continue;
      }
      // A link that leads out of the workspace is not one of its plans.
      if (!isInside(this.root, real) || !isInside(this.root, path.resolve(file.absolute))) continue;
      const relative = path.relative(this.root, path.resolve(file.absolute)).split(path.sep).join('/');
      out.push({ path: relative, uri: planUri(relative) });
      if (out.length >= MAX_LISTED_PLANS) break;
    }
    return out;
  }
}
