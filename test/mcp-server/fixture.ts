/**
 * A workspace for `lightsop mcp` tests, and the built CLI started as an MCP server over stdio or
 * Streamable HTTP with the SDK's own Client connected to it.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, expect } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli';
import { waitFor } from '../helpers/sync';

export { waitFor };

export const BIN = path.join(repoRoot, 'packages/cli/bin/lightsop.js');
/** An API key in the server's environment: it must never come back in a result. */
export const SECRET = 'sk-mcp-test-9f8e7d6c5b4a';

const SKILLS = `
import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
const here = path.dirname(new URL(import.meta.url).pathname);
export default {
  greet: { description: 'Greets someone by name', parameters: [{ name: 'name', description: 'who', required: true }], run: (args) => 'hello ' + args.join(' ') },
  touch: { description: 'Writes the file marker.txt (a side effect)', sideEffects: true, run: () => { writeFileSync(path.join(here, 'marker.txt'), 'ran'); return 'touched'; } },
  leak: { description: 'Returns the API key of the environment', run: () => 'the key is ' + process.env.LIGHTSOP_LLM_API_KEY },
  noisy: { description: 'Prints to standard output, then succeeds', run: () => { console.log('noise on stdout'); process.stdout.write('more noise\\n'); return 'quiet'; } },
  hang: { description: 'Never settles and ignores its signal', run: () => new Promise(() => {}) },
  wait: { description: 'Waits for its abort signal, then writes aborted.txt', run: (args, ctx) => new Promise((resolve, reject) => {
    writeFileSync(path.join(here, 'waiting.txt'), 'yes');
    ctx.signal.addEventListener('abort', () => { writeFileSync(path.join(here, 'aborted.txt'), 'yes'); reject(new Error('aborted')); });
  }) },
  gate: { description: 'Waits until the file open.txt exists', run: () => new Promise((resolve) => {
    const check = () => (existsSync(path.join(here, 'open.txt')) ? resolve('opened') : setTimeout(check, 10));
    check();
  }) },
  fail: { description: 'Always fails', run: () => { throw new Error('it broke'); } },
};
`;

/** A workspace with a config, skills, plans, and links that lead out of it. */
export function makeWorkspace(): { root: string; outside: string; cleanup: () => void } {
  const base = mkdtempSync(path.join(tmpdir(), 'lightsop-mcp-'));
  const root = path.join(base, 'ws');
  const outside = path.join(base, 'outside');
  mkdirSync(path.join(root, 'plans/sub'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(path.join(root, 'lightsop.config.json'), JSON.stringify({ skills: './skills.mjs', plans: ['plans/**/*.sop'] }));
  writeFileSync(path.join(root, 'skills.mjs'), SKILLS);
  writeFileSync(path.join(root, 'plans/hello.sop'), '# Greet\n@g greet world\n@lastAnswer assign $g\n');
  writeFileSync(path.join(root, 'plans/sub/with space.sop'), '@a assign one\n@b assign $a two\n');
  writeFileSync(path.join(root, 'plans/broken.sop'), '@a assign "open\n@b assign $missing\n');
  writeFileSync(path.join(outside, 'secret.sop'), '@secret assign outside-the-workspace\n');
  symlinkSync(path.join(outside, 'secret.sop'), path.join(root, 'plans/escape.sop'));
  symlinkSync(outside, path.join(root, 'plans/outdir'));
  return { root, outside, cleanup: () => rmSync(base, { recursive: true, force: true }) };
}

export interface Connected {
  readonly client: Client;
  readonly stderr: () => string;
  /** HTTP only: the endpoint. */
  readonly url?: string;
  close(): Promise<void>;
}

const ENV = { ...process.env, NO_COLOR: '1', LIGHTSOP_LLM_API_KEY: SECRET } as Record<string, string>;

/** `lightsop mcp` over stdio, connected. */
export async function connectStdio(root: string, args: string[] = []): Promise<Connected> {
  const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', ...args], cwd: root, env: ENV, stderr: 'pipe' });
  let stderr = '';
  transport.stderr?.on('data', (d: Buffer) => (stderr += d.toString('utf8')));
  const client = new Client({ name: 'lightsop-test', version: '1.0.0' });
  await client.connect(transport);
  return { client, stderr: () => stderr, close: () => client.close() };
}

/** `lightsop mcp --http 0` as a process: its URL once it listens. */
export async function startHttp(root: string, args: string[] = []): Promise<{ child: ChildProcess; url: string; stderr: () => string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [BIN, 'mcp', '--http', '0', ...args], { cwd: root, env: ENV, stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  let stdout = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout!.setEncoding('utf8').on('data', (d: string) => (stdout += d));
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  const url = await waitFor('the server to listen', () => /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(stderr)?.[1] ?? (child.exitCode !== null ? (() => {
    throw new Error(`lightsop mcp exited: ${stderr}${stdout}`);
  })() : null));
  return {
    child,
    url,
    stderr: () => stderr,
    stop: async () => {
      if (child.exitCode === null) child.kill('SIGTERM');
      return exited;
    },
  };
}

/** `lightsop mcp --http 0`, connected with the SDK's Streamable HTTP client. */
export async function connectHttp(root: string, args: string[] = []): Promise<Connected & { stop: () => Promise<number | null> }> {
  const server = await startHttp(root, args);
  const client = new Client({ name: 'lightsop-test', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(server.url)));
  return {
    client,
    url: server.url,
    stderr: server.stderr,
    stop: server.stop,
    close: async () => {
      await client.close();
      await server.stop();
    },
  };
}

export function exists(file: string): boolean {
  return existsSync(file);
}

/** A tool result's text content, joined by lines. */
export function text(result: unknown): string {
  return ((result as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');
}

/** A successful tool result's structured content (a tool error fails the test with its text). */
export function json(result: unknown): Record<string, unknown> {
  const r = result as CallToolResult;
  expect(r.isError ?? false, text(r)).toBe(false);
  return r.structuredContent as Record<string, unknown>;
}

/**
 * A workspace (`prepare` may change it) with `lightsop mcp` connected for the tests of a describe
 * block: read `ws` and `server` inside tests; both are closed and removed after the block.
 */
export function useLightsopMcp(connect: (root: string, args: string[]) => Promise<Connected>, prepare?: (ws: ReturnType<typeof makeWorkspace>) => void): {
  readonly ws: ReturnType<typeof makeWorkspace>;
  readonly server: Connected;
  call(name: string, args?: Record<string, unknown>): ReturnType<Client['callTool']>;
} {
  let ws: ReturnType<typeof makeWorkspace> | undefined;
  let server: Connected | undefined;
  beforeAll(async () => {
    ensureBuilt();
    ws = makeWorkspace();
    prepare?.(ws);
    server = await connect(ws.root, ['--grace', '200ms']);
  }, 60_000);
  afterAll(async () => {
    await server?.close();
    ws?.cleanup();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('lightsop mcp is not connected yet');
    return value;
  };
  return {
    get ws() {
      return started(ws);
    },
    get server() {
      return started(server);
    },
    call: (name, args = {}) => started(server).client.callTool({ name, arguments: args }),
  };
}
