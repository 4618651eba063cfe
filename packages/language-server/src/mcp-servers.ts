/**
 * The MCP servers of one workspace folder (docs/mcp.md), as the language server keeps them: each
 * configured server is started once per configuration (a server whose resolved configuration is
 * unchanged keeps running across config edits), its tool list is cached and refreshed on
 * `notifications/tools/list_changed`, and everything stops with the folder or the workspace.
 * Nothing here is ever awaited by a request: starting happens in the background and `onChange`
 * says when the tools (or a server's failure) are known. The workspace only configures servers
 * when it is trusted.
 */
import path from 'node:path';
import { resolveMcpServer, type CommandSpec, type McpServerEntry } from '@lightsop/core';
import { mcpStartTimeoutMs, McpConnection, McpToolSet } from '@lightsop/runtime/mcp';
import type { ConfigProblem } from './config';

interface Server {
  readonly name: string;
  /** The resolved configuration as JSON: a change restarts the server. In memory only (it holds secrets). */
  readonly signature: string;
  entry: McpServerEntry;
  state: 'starting' | 'ready' | 'failed' | 'closed';
  connection: McpConnection | null;
  error: string | null;
}

export class FolderMcpServers {
  #servers = new Map<string, Server>();
  /** Problems of the last configuration (unresolvable values), on their fields. */
  #configProblems: ConfigProblem[] = [];

  constructor(
    private readonly folderPath: string,
    private readonly onChange: () => void,
    private readonly log: (message: string) => void,
    private readonly env: Readonly<Record<string, string | undefined>> = process.env,
  ) {}

  /**
   * Applies the folder config's servers (an empty list stops them all). Unchanged servers keep
   * running; changed ones restart; removed ones stop. Never waits for a server.
   */
  configure(entries: readonly McpServerEntry[]): void {
    const problems: ConfigProblem[] = [];
    const wanted = new Map<string, { entry: McpServerEntry; signature: string; server: Parameters<typeof McpConnection.connect>[0] }>();
    for (const entry of entries) {
      const { server, problems: p } = resolveMcpServer(entry, { env: this.env, folder: this.folderPath, resolvePath: (f, r) => path.resolve(f, r) });
      for (const problem of p) problems.push({ code: 'invalid-config', severity: 'error', message: problem.message, span: problem.span });
      if (server) wanted.set(entry.name, { entry, signature: JSON.stringify(server), server });
    }
    this.#configProblems = problems;
    for (const [name, old] of this.#servers) {
      const next = wanted.get(name);
      if (next && next.signature === old.signature) {
        old.entry = next.entry; // the same server, perhaps moved in the file
        continue;
      }
      void this.#stop(old);
      this.#servers.delete(name);
    }
    for (const [name, next] of wanted) {
      if (this.#servers.has(name)) continue;
      const server: Server = { name, signature: next.signature, entry: next.entry, state: 'starting', connection: null, error: null };
      this.#servers.set(name, server);
      this.#start(server, next.server);
    }
  }

  #start(server: Server, resolved: Parameters<typeof McpConnection.connect>[0]): void {
    let timeoutMs: number;
    try {
      timeoutMs = mcpStartTimeoutMs(this.env);
    } catch (error) {
      server.state = 'failed';
      server.error = (error as Error).message;
      return;
    }
    McpConnection.connect(resolved, {
      clientName: 'lightsop-language-server',
      timeoutMs,
      onToolsChanged: (_tools, error) => {
        if (error) this.log(`lightsop: MCP server "${server.name}": refreshing its tools failed: ${error.message}`);
        if (server.state === 'ready') this.onChange();
      },
      onClosed: () => {
        if (server.state !== 'ready') return;
        server.state = 'failed';
        server.error = `MCP server "${server.name}" stopped`;
        this.log(`lightsop: ${server.error}`);
        this.onChange();
      },
    }).then(
      (connection) => {
        if (server.state === 'closed') {
          void connection.close();
          return;
        }
        server.connection = connection;
        server.state = 'ready';
        this.log(`lightsop: MCP server "${server.name}" started with ${connection.tools.length} tools`);
        this.onChange();
      },
      (error: unknown) => {
        if (server.state === 'closed') return;
        server.state = 'failed';
        server.error = error instanceof Error ? error.message : String(error);
        this.log(`lightsop: ${server.error}`);
        this.onChange();
      },
    );
  }

  #stop(server: Server): Promise<void> {
    server.state = 'closed';
    const connection = server.connection;
    server.connection = null;
    return connection ? connection.close() : Promise.resolve();
  }

  /** The tools of the servers that are up, as commands; `taken` names belong to other commands. */
  commands(taken: (name: string) => boolean): CommandSpec[] {
    const connections: McpConnection[] = [];
    for (const s of this.#servers.values()) if (s.state === 'ready' && s.connection) connections.push(s.connection);
    return McpToolSet.of(connections).commands(taken);
  }

  /** `SERVER.` for each server whose tools are not known (starting or failed): never reported unknown. */
  unlistedPrefixes(): string[] {
    const out: string[] = [];
    for (const s of this.#servers.values()) if (s.state !== 'ready') out.push(`${s.name}.`);
    return out;
  }

  /** True while some server is still starting. */
  get starting(): boolean {
    for (const s of this.#servers.values()) if (s.state === 'starting') return true;
    return false;
  }

  get size(): number {
    return this.#servers.size;
  }

  /** Unresolvable values, and one problem per server that failed to start or list, on its config field. */
  problems(): ConfigProblem[] {
    const out = [...this.#configProblems];
    for (const s of this.#servers.values()) {
      if (s.state === 'failed') out.push({ code: 'invalid-config', severity: 'error', message: s.error ?? `MCP server "${s.name}" failed`, span: s.entry.span });
    }
    return out;
  }

  /** Stops every server. */
  async close(): Promise<void> {
    const all = [...this.#servers.values()];
    this.#servers.clear();
    await Promise.all(all.map((s) => this.#stop(s)));
  }
}
