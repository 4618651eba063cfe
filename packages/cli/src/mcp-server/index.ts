/**
 * `lightsop mcp`: plans as MCP tools for coding agents (docs/mcp-server.md). Over stdio by default
 * (standard output carries only protocol messages: anything else the process would print there,
 * a skill's console.log included, goes to standard error), or over Streamable HTTP on 127.0.0.1
 * with `--http PORT`. The CLI imports this module only for `lightsop mcp`, so no other command
 * loads the MCP SDK.
 */
import path from 'node:path';
import { Writable } from 'node:stream';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CliError } from '../errors';
import { leaveWorkBehind } from '../idle';
import type { Io } from '../io';
import { redact, terminalText } from '../terminal-text';
import { serveHttp } from './http';
import { createPlanServer } from './server';
import { Workspace } from './workspace';

export interface McpOptions {
  /** `--http PORT`: Streamable HTTP on 127.0.0.1 instead of stdio. */
  readonly http?: number;
  readonly root?: string;
  readonly skills?: string;
  /** The longest a run_plan may take, in ms. */
  readonly timeout?: number;
  readonly grace?: number;
  /** False with `--no-run`. */
  readonly run?: boolean;
}

export interface McpHost {
  /** Calls `handler` on SIGINT or SIGTERM; returns the unsubscribe. */
  onStop(handler: () => void): () => void;
}

/** The longest run_plan run by default (5 minutes). */
export const DEFAULT_MAX_RUN_MS = 5 * 60_000;
/** The largest stdio message (a plan of MAX_PLAN_CHARS fits with room; a larger one gets a tool error). */
export const MAX_STDIO_MESSAGE_BYTES = 64 * 1024 * 1024;

/** Sends everything written to the process's stdout to stderr; returns the real stdout as a stream, and the undo. */
function claimStdout(): { stdout: Writable; release: () => void } {
  const out = process.stdout;
  const realWrite = out.write.bind(out) as (chunk: string | Uint8Array, callback?: (error?: Error | null) => void) => boolean;
  const original = { write: out.write, log: console.log, info: console.info, debug: console.debug };
  const toStderr = process.stderr.write.bind(process.stderr) as (chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => boolean;
  out.write = ((chunk: string | Uint8Array, encoding?: unknown, callback?: unknown) => toStderr(chunk, encoding, callback)) as typeof out.write;
  console.log = console.error;
  console.info = console.error;
  console.debug = console.error;
  const stdout = new Writable({
    write(chunk: Buffer, _encoding, callback) {
      realWrite(chunk, (error) => callback(error ?? null));
    },
  });
  return {
    stdout,
    release() {
      out.write = original.write;
      console.log = original.log;
      console.info = original.info;
      console.debug = original.debug;
    },
  };
}

export async function mcpCommand(options: McpOptions, io: Io, host: McpHost): Promise<number> {
  const workspace = new Workspace(path.resolve(io.cwd, options.root ?? '.'), options.skills ? path.resolve(io.cwd, options.skills) : undefined, io.version);
  const log = (line: string) => io.stderr(`${terminalText(redact(line))}\n`);
  const create = () => createPlanServer({
    workspace,
    maxRunMs: options.timeout ?? DEFAULT_MAX_RUN_MS,
    graceMs: options.grace ?? 2000,
    allowRun: options.run !== false,
    io,
    version: io.version,
  });

  if (options.http !== undefined) {
    let served: Awaited<ReturnType<typeof serveHttp>>;
    try {
      served = await serveHttp(options.http, create, log);
    } catch (error) {
      throw new CliError(`cannot listen on 127.0.0.1:${options.http} (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, 3);
    }
    log(`lightsop mcp: serving ${workspace.root} at ${served.url}`);
    await new Promise<void>((resolve) => {
      const off = host.onStop(() => {
        off();
        resolve();
      });
    });
    await served.close();
    await workspace.close();
    leaveWorkBehind();
    return 0;
  }

  const claimed = claimStdout();
  const server = create();
  const transport = new StdioServerTransport(process.stdin, claimed.stdout, { maxBufferSize: MAX_STDIO_MESSAGE_BYTES });
  transport.onerror = (error) => log(`lightsop mcp: ${error.message}`);
  try {
    await server.connect(transport);
    log(`lightsop mcp: serving ${workspace.root} on stdio`);
    // Until the client closes standard input (or a signal, or a message over the size limit).
    await new Promise<void>((resolve) => {
      const off = host.onStop(() => done());
      const done = () => {
        off();
        process.stdin.off('end', done);
        process.stdin.off('close', done);
        resolve();
      };
      process.stdin.once('end', done);
      process.stdin.once('close', done);
      // The protocol layer owns the transport's onclose and calls this one after its own.
      server.server.onclose = done;
    });
    await server.close().catch(() => undefined);
  } finally {
    // The workspace's MCP servers stop with this one.
    await workspace.close();
    claimed.release();
  }
  // A run still in flight (a skill ignoring its signal) must not keep the process alive.
  leaveWorkBehind();
  return 0;
}
