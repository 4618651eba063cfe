/**
 * The MCP servers of the workspace's `lightsop.config.json` as `lightsop mcp` keeps them
 * (docs/mcp-server.md): their tools are commands a plan here may call, so list_commands, lint_plan,
 * run_plan and the plan_for_task prompt know them. The config is read on every request; the
 * servers start on the first request that needs them and keep running while their resolved
 * configuration is unchanged (a change restarts them). A server that cannot be resolved, started
 * or listed is a problem of its own (`mcpProblems`), never a crash, and is tried again on the next
 * request; the others serve. The config is the user's own, as for `lightsop run`.
 */
import path from 'node:path';
import { resolveMcpServer, type ResolvedMcpServer } from '@lightsop/core';
import { mcpStartTimeoutMs, McpToolSet } from '@lightsop/runtime/mcp';
import type { Config } from '../config';

/** A configured server whose tools are not available, and why (secrets redacted). */
export interface McpProblem {
  readonly server: string;
  readonly message: string;
}

export interface WorkspaceMcp {
  /** The servers that are up (null when the config names none). */
  readonly tools: McpToolSet | null;
  readonly problems: readonly McpProblem[];
}

export class WorkspaceMcpServers {
  #current: { signature: string; tools: Promise<McpToolSet> } | null = null;

  constructor(private readonly clientVersion: string, private readonly env: Readonly<Record<string, string | undefined>> = process.env) {}

  /** The tools of `config`'s servers, started or reused; never throws for a server's problem. */
  async of(config: Config | null): Promise<WorkspaceMcp> {
    const entries = config?.mcpServers ?? [];
    if (!config || entries.length === 0) {
      await this.close();
      return { tools: null, problems: [] };
    }
    const problems: McpProblem[] = [];
    const servers: ResolvedMcpServer[] = [];
    for (const entry of entries) {
      const { server, problems: p } = resolveMcpServer(entry, { env: this.env, folder: config.dir, resolvePath: (folder, relative) => path.resolve(folder, relative) });
      if (server && p.length === 0) servers.push(server);
      else problems.push({ server: entry.name, message: `${config.file}: ${p[0]?.message ?? `field "mcpServers.${entry.name}" cannot be used`}` });
    }
    let timeoutMs: number;
    try {
      timeoutMs = mcpStartTimeoutMs(this.env);
    } catch (error) {
      return { tools: null, problems: [...problems, ...servers.map((s) => ({ server: s.name, message: (error as Error).message }))] };
    }
    // In memory only: the resolved configuration holds the secrets of `env` and `headers`.
    const signature = JSON.stringify(servers);
    if (this.#current?.signature !== signature) {
      // Replaced before anything is awaited: requests at the same time share one start.
      const old = this.#current;
      const open = async () => {
        if (old) await closeSet(old.tools);
        return McpToolSet.open(servers, { clientName: 'lightsop-mcp', clientVersion: this.clientVersion, timeoutMs });
      };
      this.#current = { signature, tools: open() };
    }
    const current = this.#current!;
    const tools = await current.tools;
    for (const problem of tools.problems) problems.push({ server: problem.server, message: `${config.file}: field "mcpServers.${problem.server}": ${problem.message}` });
    // A server that failed is tried again on the next request (it may have been fixed).
    if (tools.problems.length > 0 && this.#current === current) this.#current = { signature: `retry:${signature}`, tools: current.tools };
    return { tools, problems };
  }

  /** Stops every server. */
  async close(): Promise<void> {
    const current = this.#current;
    this.#current = null;
    if (current) await closeSet(current.tools);
  }
}

async function closeSet(tools: Promise<McpToolSet>): Promise<void> {
  await (await tools.catch(() => McpToolSet.EMPTY)).close();
}
