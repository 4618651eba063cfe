/**
 * The tools of every configured MCP server as commands (docs/mcp.md): each tool as `SERVER.TOOL`,
 * and under its bare name too for a server with `bareNames` when no other command has that name.
 * A server that cannot be started or listed is a problem of its own; the others still serve.
 * `withMcpTools` joins the tools to a skills registry: one registry, one command surface.
 */
import { BUILTIN_COMMANDS, readRegistryCommands, type CommandSpec, type ResolvedMcpServer } from '@lightsop/core';
import type { CommandPayload, CommandRegistry, Responder } from '../skills/registry';
import { McpConnection, McpServerError, type McpConnectOptions } from './connection';
import { toolArguments, toolCommandSpec, toolResultValue, ToolArgumentError, type McpToolInfo } from './tools';

export interface McpServerProblem {
  readonly server: string;
  /** Why, secrets redacted (`MCP server "fs": cannot start ...`). */
  readonly message: string;
}

/** Where a command name goes: the connection and the tool it calls. */
export interface Route {
  readonly connection: McpConnection;
  readonly tool: McpToolInfo;
}

export interface McpProgress {
  readonly command: string;
  readonly variable: string;
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/**
 * A progress notification as one short line, the same in every host (the CLI's run board, VS
 * Code's Run Plan notification): `3/5 (60%)`, `42`, with the server's message after a dash.
 */
export function progressText(progress: { readonly progress: number; readonly total?: number; readonly message?: string }): string {
  const n = Number.isFinite(progress.progress) ? progress.progress : 0;
  const total = progress.total;
  let text = String(n);
  if (typeof total === 'number' && Number.isFinite(total) && total > 0) {
    text = `${n}/${total} (${Math.max(0, Math.min(100, Math.round((n / total) * 100)))}%)`;
  }
  const message = typeof progress.message === 'string' ? progress.message.replace(/\s+/g, ' ').trim() : '';
  return message === '' ? text : `${text} – ${message.length > 80 ? `${message.slice(0, 79)}…` : message}`;
}

/** Receives each progress notification of a tool call, with the command and the plan's variable. */
export type McpProgressListener = (progress: McpProgress) => void;

export interface OpenMcpOptions extends McpConnectOptions {
  /** Called with each progress notification of a tool call. */
  readonly onProgress?: (progress: McpProgress) => void;
}

export class McpToolSet {
  static readonly EMPTY = new McpToolSet([], [], {});

  readonly #connections: readonly McpConnection[];
  readonly problems: readonly McpServerProblem[];
  readonly #onProgress: ((progress: McpProgress) => void) | undefined;

  private constructor(connections: readonly McpConnection[], problems: readonly McpServerProblem[], options: OpenMcpOptions) {
    this.#connections = connections;
    this.problems = problems;
    this.#onProgress = options.onProgress;
  }

  /** The tools of connections a host manages itself (the language server); closing the set closes them. */
  static of(connections: readonly McpConnection[]): McpToolSet {
    return new McpToolSet(connections, [], {});
  }

  /** Starts or reaches every server at once; a server that fails is listed in `problems`. */
  static async open(servers: readonly ResolvedMcpServer[], options: OpenMcpOptions = {}): Promise<McpToolSet> {
    if (servers.length === 0) return McpToolSet.EMPTY;
    const settled = await Promise.allSettled(servers.map((s) => McpConnection.connect(s, options)));
    const connections: McpConnection[] = [];
    const problems: McpServerProblem[] = [];
    settled.forEach((r, i) => {
      if (r.status === 'fulfilled') connections.push(r.value);
      else {
        const name = servers[i]!.name;
        problems.push({ server: name, message: r.reason instanceof McpServerError ? r.reason.message : `MCP server "${name}": ${String(r.reason)}` });
      }
    });
    return new McpToolSet(connections, problems, options);
  }

  get connections(): readonly McpConnection[] {
    return this.#connections;
  }

  /** The routes of the last `#routes` call: reused while no tool list changed and `taken` is the same. */
  #cached: { taken: (name: string) => boolean; lists: (readonly McpToolInfo[])[]; routes: Map<string, Route> } | null = null;

  /** Every command name and the tool it calls, qualified names first; `taken` names are never bare names. */
  #routes(taken: (name: string) => boolean): Map<string, Route> {
    const cached = this.#cached;
    if (cached && cached.taken === taken && this.#listsUnchanged(cached.lists)) return cached.routes;
    const routes = new Map<string, Route>();
    for (const connection of this.#connections) {
      for (const tool of connection.tools) routes.set(`${connection.server.name}.${tool.name}`, { connection, tool });
    }
    for (const connection of this.#connections) {
      if (!connection.server.bareNames) continue;
      for (const tool of connection.tools) {
        if (routes.has(tool.name) || taken(tool.name) || BUILTIN_COMMANDS.includes(tool.name)) continue;
        routes.set(tool.name, { connection, tool });
      }
    }
    this.#cached = { taken, lists: this.#connections.map((c) => c.tools), routes };
    return routes;
  }

  /** Whether every connection still has the tool list the routes were built from. */
  #listsUnchanged(lists: readonly (readonly McpToolInfo[])[]): boolean {
    const connections = this.#connections;
    for (let i = 0; i < lists.length; i++) if (connections[i]?.tools !== lists[i]) return false;
    return true;
  }

  /** Whether `name` is one of the tools' command names (what `commands(taken)` lists). */
  provides(name: string, taken: (name: string) => boolean = () => false): boolean {
    return !taken(name) && this.#routes(taken).has(name);
  }

  /** The tools as command specs; `taken` says which names other commands already have. */
  commands(taken: (name: string) => boolean = () => false): CommandSpec[] {
    const out: CommandSpec[] = [];
    for (const [name, route] of this.#routes(taken)) {
      if (taken(name)) continue;
      out.push(toolCommandSpec(route.connection.server.name, route.tool, name));
    }
    return out;
  }

  /**
   * Calls the tool `name` with a plan's arguments. Resolves to the value, or rejects with an
   * Error whose message is the tool's error text (or why the arguments do not fit).
   */
  async call(name: string, args: readonly unknown[], payload: { signal?: AbortSignal; variable?: string }, taken: (name: string) => boolean = () => false, onProgressOfCall?: McpProgressListener): Promise<unknown> {
    const route = this.#routes(taken).get(name);
    if (!route) throw new Error(`Unknown command ${name}`);
    return this.#callRoute(route, name, args, payload, onProgressOfCall);
  }

  /** The route of a command name, or undefined when no tool has it (or `taken` says another command does). */
  route(name: string, taken: (name: string) => boolean = () => false): Route | undefined {
    return taken(name) ? undefined : this.#routes(taken).get(name);
  }

  /** `call` for a route already looked up (`route`). */
  callRoute(route: Route, name: string, args: readonly unknown[], payload: { signal?: AbortSignal; variable?: string }, onProgressOfCall?: McpProgressListener): Promise<unknown> {
    return this.#callRoute(route, name, args, payload, onProgressOfCall);
  }

  async #callRoute(route: Route, name: string, args: readonly unknown[], payload: { signal?: AbortSignal; variable?: string }, onProgressOfCall: McpProgressListener | undefined): Promise<unknown> {
    let input: Record<string, unknown>;
    try {
      input = toolArguments(route.tool, args);
    } catch (error) {
      if (error instanceof ToolArgumentError) throw new Error(`${name}: ${error.message}`);
      throw error;
    }
    payload.signal?.throwIfAborted();
    const onProgress = onProgressOfCall ?? this.#onProgress;
    const callOptions: { signal?: AbortSignal; onProgress?: (p: { progress: number; total?: number; message?: string }) => void } = {};
    if (payload.signal) callOptions.signal = payload.signal;
    if (onProgress) callOptions.onProgress = (p) => onProgress({ command: name, variable: payload.variable ?? '', ...p });
    let result;
    try {
      result = await route.connection.callTool(route.tool.name, input, callOptions);
    } catch (error) {
      if (payload.signal?.aborted) throw error;
      throw new Error(route.connection.redact(`${name}: ${error instanceof Error ? error.message : String(error)}`));
    }
    const value = toolResultValue(result);
    if (!value.ok) throw new Error(route.connection.redact(value.error));
    return value.value;
  }

  /** Closes every connection (stdio servers stop). */
  async close(): Promise<void> {
    await Promise.all(this.#connections.map((c) => c.close()));
  }
}

/**
 * One registry with the commands of `base` (a skills module's registry, or none) and the MCP
 * tools: `base` wins a name both have. Execution of a tool goes to its server with the payload's
 * abort signal; everything else goes to `base`.
 */
export function withMcpTools(base: CommandRegistry | null, tools: McpToolSet, options: { readonly onProgress?: McpProgressListener } = {}): CommandRegistry {
  if (tools.connections.length === 0 && base) return base;
  // The base's names are read once per listing and kept for calls: a call does no schema work
  // (the tool set reuses its routes while no server's tool list changed).
  let names: ReadonlySet<string> = new Set<string>();
  let namesRead = false;
  // A new function for each reading of the names: the tool set's cached routes are keyed by it.
  let taken = (n: string) => names.has(n);
  const readNames = (): readonly CommandSpec[] => {
    const own = base ? readRegistryCommands(base) : [];
    const read = new Set(own.map((c) => c.name));
    names = read;
    taken = (n: string) => read.has(n);
    namesRead = true;
    return own;
  };
  const registry: CommandRegistry = {
    listCommands() {
      const own = readNames();
      return [...own, ...tools.commands(taken)];
    },
    async executeCommand(payload: CommandPayload, responder: Responder) {
      if (!namesRead) readNames();
      if (base && names.has(payload.command)) return base.executeCommand(payload, responder);
      const route = tools.route(payload.command, taken);
      if (route) {
        try {
          return responder.success(await tools.callRoute(route, payload.command, payload.args, payload, options.onProgress));
        } catch (error) {
          // The run was stopped: the call was cancelled on the server (notifications/cancelled).
          if (payload.signal?.aborted) return responder.cancel(abortReason(payload.signal));
          return responder.fail(error instanceof Error ? error.message : String(error));
        }
      }
      if (base) return base.executeCommand(payload, responder);
      throw new Error(`Unknown command ${payload.command}: no skills module or MCP server provides it`);
    },
  };
  if (base?.autoCancel !== undefined) registry.autoCancel = base.autoCancel;
  if (base?.cancelHeuristic) registry.cancelHeuristic = base.cancelHeuristic;
  return registry;
}

function abortReason(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  const text = reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : '';
  return text !== '' ? `cancelled on the MCP server (${text})` : 'cancelled on the MCP server';
}
