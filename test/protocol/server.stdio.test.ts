// The built server over stdio, as editors start it: `lightsop-language-server --stdio`. The
// bundle is built first when it is missing, so this test never passes without running it.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import type { Hover } from 'vscode-languageserver';
import { TestClient, withTimeout } from './helpers';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const bin = path.join(root, 'packages/language-server/bin/lightsop-language-server.cjs');
const bundle = path.join(root, 'packages/language-server/dist/server.cjs');

let child: ChildProcess;
let client: TestClient;
let stderr = '';

beforeAll(() => {
  if (!existsSync(bundle)) {
    const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, encoding: 'utf8' });
    if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
  }
  expect(existsSync(bundle)).toBe(true);
  child = spawn(process.execPath, [bin, '--stdio'], { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
  child.stderr!.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const connection = createMessageConnection(new StreamMessageReader(child.stdout!), new StreamMessageWriter(child.stdin!));
  client = new TestClient(connection, () => undefined);
}, 60_000);

afterAll(() => {
  client.dispose();
  if (child.exitCode === null) child.kill();
});

describe('lightsop-language-server --stdio', () => {
  it('initializes, publishes diagnostics, answers requests and exits cleanly', async () => {
    const init = await client.initialize();
    expect(init.serverInfo?.name).toBe('lightsop-language-server');
    const uri = 'file:///plans/stdio.sop';
    await client.open(uri, '@a emit $b\n@lastAnswer final_answer $a\n');
    const published = await client.diagnosticsFor(uri, 1);
    expect(published.diagnostics.map((d) => d.code)).toEqual(['undefined-variable']);
    const hover = await client.request<Hover>('textDocument/hover', { textDocument: { uri }, position: { line: 1, character: 26 } });
    expect(JSON.stringify(hover.contents)).toContain('@a emit $b');

    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    await client.shutdown();
    await client.connection.sendNotification('exit');
    expect(await withTimeout(exited, 15000, 'the server to exit')).toBe(0);
    expect(stderr).toBe('');
  });
});
