// The built server over stdio against a hostile client's framing (issue 11, item 13): a bad
// Content-Length, a missing or repeated one, a header block that never ends, and a declared length
// far above the limit. The server must not stay alive and deaf: it logs one line to stderr and
// exits with code 1 (the client restarts it), and it never buffers an oversized message.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { withTimeout } from './helpers';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'packages/language-server/bin/lightsop-language-server.cjs');
const bundle = path.join(root, 'packages/language-server/dist/server.cjs');
const MiB = 1024 * 1024;

interface Server {
  child: ChildProcess;
  stdout: () => string;
  stderr: () => string;
  exited: Promise<number | null>;
}

function startServer(): Server {
  const child = spawn(process.execPath, [bin, '--stdio'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  // Writes after the server exited fail with EPIPE; the test looks at the exit instead.
  child.stdin!.on('error', () => undefined);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, stdout: () => out, stderr: () => err, exited };
}

function frame(message: unknown): string {
  const body = JSON.stringify(message);
  return `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

const initialize = frame({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { processId: null, rootUri: null, capabilities: {} } });

/** Waits until the server answered the initialize request on stdout. */
async function initialized(server: Server): Promise<void> {
  await withTimeout(new Promise<void>((resolve) => {
    const check = () => (server.stdout().includes('"id":1') ? resolve() : undefined);
    server.child.stdout!.on('data', check);
    check();
  }), 15_000, 'the initialize answer');
}

beforeAll(() => {
  if (!existsSync(bundle)) {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
  }
}, 120_000);

describe('lightsop-language-server --stdio: framing errors', () => {
  const cases: [string, string][] = [
    ['a Content-Length that is not a number', 'Content-Length: abc\r\n\r\n{}'],
    ['a negative Content-Length', 'Content-Length: -5\r\n\r\n{}'],
    ['a Content-Length above the limit', 'Content-Length: 99999999999999999999\r\n\r\n{}'],
    ['no Content-Length', 'Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{}'],
    ['two Content-Length headers', 'Content-Length: 2\r\nContent-Length: 200\r\n\r\n{}'],
    ['a header line without a colon', 'Content-Length 2\r\n\r\n{}'],
    ['a header block that never ends', 'X'.repeat(64 * 1024)],
  ];
  for (const [name, bad] of cases) {
    it(`${name}: one line on stderr, exit code 1`, async () => {
      const server = startServer();
      server.child.stdin!.write(initialize);
      await initialized(server);
      server.child.stdin!.write(bad);
      // A valid request after the bad frame: the server must not just go quiet.
      server.child.stdin!.write(frame({ jsonrpc: '2.0', id: 2, method: 'shutdown' }));
      expect(await withTimeout(server.exited, 15_000, 'the server to exit')).toBe(1);
      const lines = server.stderr().trim().split('\n');
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/^lightsop-language-server: invalid message framing on stdin: .+; exiting so that the client restarts the server$/);
    }, 30_000);
  }

  it('a huge declared length with data streamed after it: exits once past the limit, having read little', async () => {
    const server = startServer();
    server.child.stdin!.write(initialize);
    await initialized(server);
    let exited = false;
    void server.exited.then(() => (exited = true));
    server.child.stdin!.write(`Content-Length: ${600 * MiB}\r\n\r\n`);
    const chunk = Buffer.alloc(MiB, 0x20);
    let written = 0;
    // Stream with backpressure until the server is gone (or far more than it may ever hold).
    while (!exited && written < 256 * MiB) {
      const ok = server.child.stdin!.write(chunk);
      written += chunk.length;
      if (!ok) await Promise.race([new Promise((resolve) => server.child.stdin!.once('drain', resolve)), server.exited]);
    }
    expect(await withTimeout(server.exited, 15_000, 'the server to exit')).toBe(1);
    expect(server.stderr()).toMatch(/Content-Length 629145600 is above the limit of 67108864 bytes/);
    // What the server accepted from the pipe bounds what it could have buffered.
    expect(written).toBeLessThan(64 * MiB);
  }, 120_000);

  it('valid frames split at every byte and several frames in one write are read as before', async () => {
    const server = startServer();
    for (const byte of Buffer.from(initialize)) server.child.stdin!.write(Buffer.from([byte]));
    await initialized(server);
    server.child.stdin!.write(frame({ jsonrpc: '2.0', id: 2, method: 'shutdown' }) + frame({ jsonrpc: '2.0', method: 'exit' }));
    expect(await withTimeout(server.exited, 15_000, 'the server to exit')).toBe(0);
    expect(server.stderr()).toBe('');
  }, 30_000);
});
