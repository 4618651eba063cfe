/**
 * The MCP servers of the nearest `lightsop.config.json` (docs/mcp.md): resolved (`${env:NAME}`,
 * `${workspaceFolder}`), started or reached once per config file per process, and closed when the
 * command ends. The config is the user's own: the CLI starts what it names. A value that cannot be
 * resolved is a config error naming the file and the field (exit 3); a server that cannot be
 * started or listed is an error naming it, with the command's usage exit code.
 */
import path from 'node:path';
import { resolveMcpServer, type ResolvedMcpServer } from '@lightsop/core';
import type { CommandRegistry } from '@lightsop/runtime';
// Types only: the MCP client and the SDK load (a chunk of their own) when a config names servers.
import type { McpProgress, McpToolSet } from '@lightsop/runtime/mcp';
import pkg from '../package.json';
import { findConfig, type Config } from './config';
import { CliError, CONFIG_ERROR_EXIT } from './errors';

const opened = new Map<string, Promise<McpToolSet>>();

/** The config's servers with every value expanded; a problem is a config error (exit 3). */
export function resolvedServers(config: Config, env: Readonly<Record<string, string | undefined>> = process.env): ResolvedMcpServer[] {
  const out: ResolvedMcpServer[] = [];
  for (const entry of config.mcpServers ?? []) {
    const { server, problems } = resolveMcpServer(entry, { env, folder: config.dir, resolvePath: (folder, relative) => path.resolve(folder, relative) });
    const first = problems[0];
    if (first || !server) throw new CliError(`${config.file}: ${first?.message ?? `field "mcpServers.${entry.name}" cannot be used`}`, CONFIG_ERROR_EXIT);
    out.push(server);
  }
  return out;
}

/**
 * The MCP tools for a plan in `dir`: null without a config or without `mcpServers`. Every server
 * of the config starts at once; one that fails is an error (`exitCode`) naming the config file.
 */
export async function mcpToolsFor(dir: string, exitCode: number): Promise<McpToolSet | null> {
  const config = findConfig(dir);
  return config ? mcpToolsOf(config, exitCode) : null;
}

/** The MCP tools of one config (null without `mcpServers`), started once per process. */
export async function mcpToolsOf(config: Config, exitCode: number): Promise<McpToolSet | null> {
  if (!config.mcpServers || config.mcpServers.length === 0) return null;
  let promise = opened.get(config.file);
  if (!promise) {
    const servers = resolvedServers(config);
    const { mcpStartTimeoutMs, McpTimeoutSettingError, McpToolSet } = await import('@lightsop/runtime/mcp');
    let timeoutMs: number;
    try {
      timeoutMs = mcpStartTimeoutMs();
    } catch (error) {
      if (error instanceof McpTimeoutSettingError) throw new CliError(error.message, exitCode);
      throw error;
    }
    promise = McpToolSet.open(servers, { clientName: 'lightsop', clientVersion: pkg.version, timeoutMs });
    opened.set(config.file, promise);
  }
  const tools = await promise;
  const problem = tools.problems[0];
  if (problem) throw new CliError(`${config.file}: field "mcpServers.${problem.server}": ${problem.message}`, exitCode);
  return tools;
}

/**
 * A registry with the commands of `base` and the MCP tools of the plan's config. `onProgress`
 * gets each progress notification of their calls with its text (`progressText`, the line every
 * host shows): callers need not load the MCP client to format it.
 */
export async function registryWithMcp(base: CommandRegistry | null, dir: string, exitCode: number, onProgress?: (progress: McpProgress, text: string) => void): Promise<CommandRegistry | null> {
  const tools = await mcpToolsFor(dir, exitCode);
  if (!tools || tools.connections.length === 0) return base;
  const { progressText, withMcpTools } = await import('@lightsop/runtime/mcp');
  return withMcpTools(base, tools, onProgress ? { onProgress: (p) => onProgress(p, progressText(p)) } : {});
}

/** Closes every server this process started or reached. */
export async function closeMcpServers(): Promise<void> {
  const all = [...opened.values()];
  opened.clear();
  await Promise.all(all.map(async (p) => {
    try {
      await (await p).close();
    } catch {
      // A server that never opened has nothing to close.
    }
  }));
}
