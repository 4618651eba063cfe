/**
 * The MCP servers of the workspace's `lightsop.config.json` as `lightsop mcp` keeps them
 * (docs/mcp-server.md): their tools are commands a plan here may call, so list_commands, lint_plan,
 * run_plan and the plan_for_task prompt know them. The config is read on every request; each
 * server starts on the first request that needs it and keeps running while its resolved
 * configuration is unchanged (a change restarts it, a removal stops it). A server that cannot be
 * resolved, started or listed is a problem of its own (`mcpProblems`), never a crash, and is tried
 * again on the next request; the others keep serving. The config is the user's own, as for
 * `lightsop run`.
 */
import path from 'node:path';
import { resolveMcpServer, type ResolvedMcpServer } from '@lightsop/core';
import { mcpStartTimeoutMs, McpConnection, McpToolSet } from '@lightsop/runtime/mcp';
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

interface Running {
  /** The resolved configuration as JSON, in memory only (it holds the secrets of `env` and `headers`). */
  readonly signature: string;
  /** The connection, or the server's problem. */
  readonly started: Promise<McpConnection | { problem: string }>;
}

export class WorkspaceMcpServers {
  readonly #running = new Map<string, Running>();

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
    // Servers no longer configured (or no longer resolvable) stop.
    const wanted = new Set(servers.map((s) => s.name));
    for (const name of [...this.#running.keys()]) if (!wanted.has(name)) void this.#stop(name);
    // Each server is replaced before anything is awaited: requests at the same time share one start.
    for (const server of servers) {
      const signature = JSON.stringify(server);
      const current = this.#running.get(server.name);
      if (current?.signature === signature) continue;
      const old = current?.started;
      this.#running.set(server.name, { signature, started: this.#start(server, timeoutMs, old) });
    }
    const connections: McpConnection[] = [];
    for (const server of servers) {
      const running = this.#running.get(server.name)!;
      const started = await running.started;
      if (started instanceof McpConnection) {
        connections.push(started);
        continue;
      }
      problems.push({ server: server.name, message: `${config.file}: field "mcpServers.${server.name}": ${started.problem}` });
      // Tried again on the next request (it may have been fixed).
      if (this.#running.get(server.name) === running) this.#running.delete(server.name);
    }
    return { tools: McpToolSet.of(connections), problems };
  }

  async #start(server: ResolvedMcpServer, timeoutMs: number, old: Running['started'] | undefined): Promise<McpConnection | { problem: string }> {
    if (old) await closeStarted(old);
    const set = await McpToolSet.open([server], { clientName: 'lightsop-mcp', clientVersion: this.clientVersion, timeoutMs });
    const connection = set.connections[0];
    return connection ?? { problem: set.problems[0]?.message ?? `MCP server "${server.name}" failed` };
  }

  async #stop(name: string): Promise<void> {
    const running = this.#running.get(name);
    this.#running.delete(name);
    if (running) await closeStarted(running.started);
  }

  /** Stops every server. */
  async close(): Promise<void> {
    await Promise.all([...this.#running.keys()].map((name) => this.#stop(name)));
  }
}

async function closeStarted(started: Running['started']): Promise<void> {
  const value = await started.catch(() => null);
  if (value instanceof McpConnection) await value.close();
}
