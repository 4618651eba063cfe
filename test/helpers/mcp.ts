/**
 * The real MCP servers the tests start, from node_modules (pinned devDependencies, never fetched at
 * test time): `@modelcontextprotocol/server-filesystem` and `@modelcontextprotocol/server-everything`.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import path from 'node:path';
import { repoRoot } from './cli';

export const FILESYSTEM_SERVER = path.join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
export const EVERYTHING_SERVER = path.join(repoRoot, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');

/** The `mcpServers` entry of a stdio server run by this Node. */
export function nodeServer(script: string, args: string[] = []): { command: string; args: string[] } {
  return { command: process.execPath, args: [script, ...args] };
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/**
 * server-everything in its Streamable HTTP mode on a free port; resolves once it listens (it
 * says so on stderr). `stop()` ends it.
 */
export async function startEverythingHttp(): Promise<{ url: string; stop: () => Promise<void>; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  await new Promise<void>((resolve, reject) => {
    const deadline = setTimeout(() => reject(new Error(`server-everything did not start listening: ${output}`)), 60_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (/listening on port/i.test(output)) {
        clearTimeout(deadline);
        resolve();
      }
    };
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(deadline);
      reject(new Error(`server-everything exited (${code}): ${output}`));
    });
  });
  const stop = () => new Promise<void>((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
  return { url: `http://127.0.0.1:${port}/mcp`, stop, child };
}
