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

/** The options of a call without a signal or progress: one object for every such call. */
const CALL_OPTIONS = { timeout: CALL_TIMEOUT_MS } as const;

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
   * The calls in flight per run signal, so that a signal has one `abort` listener per connection
   * instead of one per call (a Node AbortSignal's listeners are EventTarget listeners: adding and
   * removing one, and making an AbortController per call, cost more than the rest of a call).
   */
  readonly #inFlight = new WeakMap<AbortSignal, Set<CallCancel>>();

  /**
   * Calls a tool. `signal` aborting sends `notifications/cancelled` for the call in flight and
   * rejects it with the signal's reason; a call that has finished is never cancelled.
   * `onProgress` receives the server's progress notifications.
   */
  async callTool(name: string, args: Record<string, unknown>, options: { signal?: AbortSignal; onProgress?: (progress: { progress: number; total?: number; message?: string }) => void } = {}): Promise<McpToolResult> {
    const parent = options.signal;
    const request = { name, arguments: args };
    const onprogress = options.onProgress;
    // Without a signal there is nothing to forward.
    if (!parent) return (await this.client.callTool(request, undefined, onprogress ? { timeout: CALL_TIMEOUT_MS, onprogress } : CALL_OPTIONS)) as McpToolResult;
    parent.throwIfAborted();
    let calls = this.#inFlight.get(parent);
    if (!calls) {
      const watched = new Set<CallCancel>();
      calls = watched;
      this.#inFlight.set(parent, watched);
      parent.addEventListener('abort', () => {
        for (const call of watched) call.abort(parent.reason);
        watched.clear();
      }, { once: true });
    }
    const cancel = new CallCancel();
    calls.add(cancel);
    // The options object written out, not spread: this is every call's path.
    const callOptions: { timeout: number; signal: AbortSignal; onprogress?: typeof onprogress } = { timeout: CALL_TIMEOUT_MS, signal: cancel.asSignal() };
    if (onprogress) callOptions.onprogress = onprogress;
    try {
      const result = await this.client.callTool(request, undefined, callOptions);
      return result as McpToolResult;
    } finally {
      calls.delete(cancel);
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

/**
 * What the SDK reads of a request's signal, for one tool call: `aborted`, `reason`,
 * `throwIfAborted()` and one `abort` listener, which sends `notifications/cancelled` for that
 * request's id and rejects it (the SDK's own cancellation path). The SDK never removes that
 * listener, so a shared signal cannot be handed to it, and a Node AbortController per call costs
 * about 15 us (EventTarget); this stand-in costs an object. The run's signal reaches it through
 * the connection's one listener per signal (`McpConnection.#inFlight`).
 */
class CallCancel {
  aborted = false;
  reason: unknown = undefined;
  #listeners: (() => void)[] = [];

  throwIfAborted(): void {
    if (this.aborted) throw this.reason;
  }

  addEventListener(type: string, listener: () => void): void {
    if (type === 'abort') this.#listeners.push(listener);
  }

  removeEventListener(type: string, listener: () => void): void {
    if (type === 'abort') this.#listeners = this.#listeners.filter((l) => l !== listener);
  }

  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    for (const listener of this.#listeners) listener();
    this.#listeners = [];
  }

  /** This stand-in where the SDK's options type an AbortSignal (it reads only the members above). */
  asSignal(): AbortSignal {
    return this as unknown as AbortSignal;
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
