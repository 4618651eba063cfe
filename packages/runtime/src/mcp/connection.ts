/**
 * One connection to a configured MCP server (docs/mcp.md) through `@modelcontextprotocol/sdk`:
 * stdio (the server is started with the safe part of the environment plus its `env`, its stderr
 * kept for error messages) or Streamable HTTP. It lists the tools (every page), keeps the list
 * current on `notifications/tools/list_changed`, and calls tools with the run's abort signal, so a
 * cancellation reaches the server as `notifications/cancelled`.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { redactSecrets, type ResolvedMcpServer } from '@lightsop/core';
import type { McpToolInfo, McpToolResult } from './tools';

/** How long starting a server and listing its tools may take when LIGHTSOP_MCP_TIMEOUT is not set. */
export const DEFAULT_MCP_START_TIMEOUT_MS = 30_000;

/** The longest a tool call may take: the run's own signal (--timeout, Ctrl-C) is what stops it. */
const CALL_TIMEOUT_MS = 2 ** 31 - 1;

/** How much of a stdio server's stderr is kept for error messages. */
const STDERR_KEEP = 4000;

/** A server that could not be started, reached or listed: the message says why (secrets redacted). */
export class McpServerError extends Error {
  constructor(readonly server: string, readonly reason: string) {
    super(`MCP server "${server}": ${reason}`);
    this.name = 'McpServerError';
  }
}

export interface McpConnectOptions {
  /** The client name and version sent to the server. */
  readonly clientName?: string;
  readonly clientVersion?: string;
  readonly timeoutMs?: number;
  /** Called with the new list after `notifications/tools/list_changed` (and a failed refresh's error). */
  readonly onToolsChanged?: (tools: readonly McpToolInfo[] | null, error: Error | null) => void;
  /** Called when the connection closes without `close()` (the server exited). */
  readonly onClosed?: () => void;
}

/** The secret values of a server's configuration: what messages must never show. */
function secretsOf(server: ResolvedMcpServer): string[] {
  return [...Object.values(server.env ?? {}), ...Object.values(server.headers ?? {})];
}

function messageOf(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}

export class McpConnection {
  #tools: readonly McpToolInfo[] = [];
  #closing = false;
  #stderr = '';

  private constructor(
    readonly server: ResolvedMcpServer,
    private readonly client: Client,
    private readonly transport: Transport,
  ) {}

  /** Starts or reaches the server, initializes and lists its tools. Throws McpServerError. */
  static async connect(server: ResolvedMcpServer, options: McpConnectOptions = {}): Promise<McpConnection> {
    const secrets = secretsOf(server);
    const fail = (reason: string) => new McpServerError(server.name, redactSecrets(reason, secrets));
    let connection: McpConnection | null = null;
    const client = new Client(
      { name: options.clientName ?? 'lightsop', version: options.clientVersion ?? '0.1.0' },
      {
        capabilities: {},
        listChanged: {
          tools: {
            onChanged: (error, tools) => {
              if (!connection) return;
              if (tools) connection.#tools = tools;
              options.onToolsChanged?.(tools ?? null, error);
            },
          },
        },
      },
    );
    let transport: Transport;
    if (server.transport === 'http') {
      let url: URL;
      try {
        url = new URL(server.url ?? '');
      } catch {
        throw fail('the url is not a valid URL');
      }
      transport = new StreamableHTTPClientTransport(url, { requestInit: { headers: { ...(server.headers ?? {}) } } });
    } else {
      const stdio = new StdioClientTransport({
        command: server.command ?? '',
        args: [...(server.args ?? [])],
        ...(server.env ? { env: { ...server.env } } : {}),
        ...(server.cwd ? { cwd: server.cwd } : {}),
        stderr: 'pipe',
      });
      transport = stdio;
      connection = new McpConnection(server, client, transport);
      const keep = connection;
      stdio.stderr?.on('data', (chunk: Buffer | string) => {
        keep.#stderr = (keep.#stderr + chunk.toString()).slice(-STDERR_KEEP);
      });
    }
    connection ??= new McpConnection(server, client, transport);
    const created = connection;
    const timeout = options.timeoutMs ?? DEFAULT_MCP_START_TIMEOUT_MS;
    try {
      await client.connect(transport, { timeout });
      created.#tools = await created.#listAll(timeout);
    } catch (error) {
      const stderr = created.#stderr.trim();
      await created.close();
      const reason = server.transport === 'http' ? `cannot connect to ${redactUrl(server.url ?? '')}: ${messageOf(error)}` : `cannot start "${server.command ?? ''}": ${messageOf(error)}`;
      throw fail(stderr ? `${reason}; its last output: ${lastLines(stderr)}` : reason);
    }
    transport.onclose = chain(transport.onclose, () => {
      if (!created.#closing) options.onClosed?.();
    });
    return created;
  }

  /** The tools the server lists (kept current on `tools/list_changed`). */
  get tools(): readonly McpToolInfo[] {
    return this.#tools;
  }

  /** Lists the tools again. */
  async refresh(timeoutMs = DEFAULT_MCP_START_TIMEOUT_MS): Promise<readonly McpToolInfo[]> {
    this.#tools = await this.#listAll(timeoutMs);
    return this.#tools;
  }

  async #listAll(timeoutMs: number): Promise<McpToolInfo[]> {
    const out: McpToolInfo[] = [];
    let cursor: string | undefined;
    // A server that keeps answering with a cursor is cut off after 100 pages.
    for (let page = 0; page < 100; page++) {
      const result = await this.client.listTools(cursor === undefined ? undefined : { cursor }, { timeout: timeoutMs });
      for (const tool of result.tools) out.push(tool as McpToolInfo);
      cursor = result.nextCursor;
      if (cursor === undefined) break;
    }
    return out;
  }

  /**
   * Calls a tool. `signal` aborting sends `notifications/cancelled` and rejects; `onProgress`
   * receives the server's progress notifications.
   */
  async callTool(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal; onProgress?: (progress: { progress: number; total?: number; message?: string }) => void } = {}): Promise<McpToolResult> {
    // A signal of this call alone: the run's signal aborting after the call finished must not
    // send a cancellation for it (the SDK keeps listening to the signal it is given).
    const parent = options.signal;
    const request = { name, arguments: args };
    // Without a signal there is nothing to forward: no controller and no listener per call.
    if (!parent) return (await this.client.callTool(request, undefined, { timeout: CALL_TIMEOUT_MS, ...(options.onProgress ? { onprogress: options.onProgress } : {}) })) as McpToolResult;
    const own = new AbortController();
    const forward = () => own.abort(parent.reason);
    if (parent.aborted) forward();
    else parent.addEventListener('abort', forward, { once: true });
    try {
      const result = await this.client.callTool(request, undefined, {
        timeout: CALL_TIMEOUT_MS,
        signal: own.signal,
        ...(options.onProgress ? { onprogress: options.onProgress } : {}),
      });
      return result as McpToolResult;
    } finally {
      parent.removeEventListener('abort', forward);
    }
  }

  /** Redacts this server's configured secrets from a text. */
  redact(text: string): string {
    return redactSecrets(text, secretsOf(this.server));
  }

  /** Closes the connection; a stdio server is stopped. Never throws. */
  async close(): Promise<void> {
    if (this.#closing) return;
    this.#closing = true;
    try {
      await this.client.close();
    } catch {
      // Already closed.
    }
    try {
      await this.transport.close();
    } catch {
      // Already closed.
    }
  }
}

function chain(first: (() => void) | undefined, second: () => void): () => void {
  return () => {
    first?.();
    second();
  };
}

/** A URL without its query and credentials: what messages show of an HTTP server. */
function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return 'the url';
  }
}

function lastLines(text: string): string {
  const lines = text.split('\n').filter((l) => l.trim() !== '');
  return lines.slice(-3).join(' | ').slice(-500);
}
