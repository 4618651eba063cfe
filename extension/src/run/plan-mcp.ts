/**
 * The MCP servers of a workspace's `lightsop.config.json` for Run Plan, the debugger and the chat
 * panel (docs/mcp.md): started in the extension host once per configuration (the same resolved
 * configuration reuses the running servers), only when the workspace is trusted (the caller
 * says), and stopped when the extension deactivates. No `vscode` import.
 */
import path from 'node:path';
import { createHash } from 'node:crypto';
import { resolveMcpServer, type ResolvedMcpServer } from '@lightsop/core';
import type { CommandRegistry } from '@lightsop/runtime';
import { McpToolSet, withMcpTools, type McpProgressListener } from '@lightsop/runtime/mcp';
import { readConfigFileSync } from '../config-file';

const running = new Map<string, { signature: string; tools: Promise<McpToolSet> }>();

export type McpJoin =
  | { readonly ok: true; readonly registry: CommandRegistry; readonly note: string | null; readonly stamp: string }
  | { readonly ok: false; readonly message: string };

/**
 * `registry` with the tools of the config's MCP servers. Without servers it is returned as it
 * is; in an untrusted workspace too, with a note that they were not started. `onProgress` gets
 * the progress notifications of the joined registry's tool calls (Run Plan's notification).
 */
export async function joinMcpTools(registry: CommandRegistry, configFile: string | null, trusted: boolean, onProgress?: McpProgressListener): Promise<McpJoin> {
  if (!configFile) return { ok: true, registry, note: null, stamp: 'no-mcp' };
  const entries = readConfigFileSync(configFile).config?.mcpServers ?? [];
  if (entries.length === 0) {
    await stopServers(configFile);
    return { ok: true, registry, note: null, stamp: 'no-mcp' };
  }
  if (!trusted) {
    return { ok: true, registry, note: 'MCP servers were not started: this workspace is not trusted', stamp: 'mcp-untrusted' };
  }
  const servers: ResolvedMcpServer[] = [];
  for (const entry of entries) {
    const { server, problems } = resolveMcpServer(entry, { env: process.env, folder: path.dirname(configFile), resolvePath: (f, r) => path.resolve(f, r) });
    if (!server) return { ok: false, message: `${configFile}: ${problems[0]?.message ?? `field "mcpServers.${entry.name}" cannot be used`}` };
    servers.push(server);
  }
  // Secrets stay in memory: the stamp is a hash of the resolved configuration.
  const signature = createHash('sha256').update(JSON.stringify(servers)).digest('hex');
  let current = running.get(configFile);
  if (!current || current.signature !== signature) {
    await stopServers(configFile);
    current = { signature, tools: McpToolSet.open(servers, { clientName: 'lightsop-vscode' }) };
    running.set(configFile, current);
  }
  const tools = await current.tools;
  const problem = tools.problems[0];
  if (problem) {
    // Started again on the next run: the server may have been fixed.
    await stopServers(configFile);
    return { ok: false, message: `${configFile}: field "mcpServers.${problem.server}": ${problem.message}` };
  }
  return { ok: true, registry: withMcpTools(registry, tools, onProgress ? { onProgress } : {}), note: `MCP servers: ${servers.map((s) => s.name).join(', ')}`, stamp: `mcp:${signature.slice(0, 12)}` };
}

async function stopServers(configFile: string): Promise<void> {
  const current = running.get(configFile);
  running.delete(configFile);
  if (current) await (await current.tools.catch(() => McpToolSet.EMPTY)).close();
}

/** Stops every MCP server the extension started (deactivation). */
export async function stopAllMcpServers(): Promise<void> {
  await Promise.all([...running.keys()].map((file) => stopServers(file)));
}
