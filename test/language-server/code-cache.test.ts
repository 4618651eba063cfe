/**
 * The language server's V8 code cache (packages/language-server/src/entry.ts, built to
 * dist/server.cjs): a server that had no cache writes one at exit to a folder private to the
 * user under the temporary directory, the next server compiles from it, a corrupt cache is
 * replaced, a folder open to others is not used, and LIGHTSOP_CODE_CACHE=0 turns it off.
 * Whatever the cache holds, the server says the same, and it still imports a skills module
 * (code compiled from a cache has no loader of its own for `import()`).
 */
import { spawn, spawnSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { createMessageConnection, StreamMessageReader, StreamMessageWriter } from 'vscode-jsonrpc/node';
import { TestClient, withTimeout } from '../protocol/helpers';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = path.join(root, 'packages/language-server/bin/lightsop-language-server.cjs');
const posix = typeof process.getuid === 'function';

let workspace: string;
const planUri = () => pathToFileURL(path.join(workspace, 'plan.sop')).href;

/** One server session through the bin: open the plan, read its diagnostics, shut down; what it said. */
async function session(temp: string, env: Record<string, string> = {}): Promise<{ codes: string[]; messages: string[]; exit: number | null; stderr: string }> {
  const child = spawn(process.execPath, [BIN, '--stdio'], {
    cwd: workspace,
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, TMPDIR: temp, TMP: temp, TEMP: temp, ...env },
  });
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const client = new TestClient(createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin)), () => undefined);
  try {
    await client.initialize({ initializationOptions: { trusted: true }, workspaceFolders: [{ uri: pathToFileURL(workspace).href, name: 'w' }] });
    await client.open(planUri(), '@a fetch "https://example.org"\n@b nope $a\n@lastAnswer final_answer $b\n');
    const published = await client.diagnosticsFor(planUri(), 1);
    await client.shutdown();
    await client.connection.sendNotification('exit');
    const exit = await withTimeout(exited, 15_000, 'the server to exit');
    return { codes: published.diagnostics.map((d) => String(d.code)), messages: published.diagnostics.map((d) => d.message), exit, stderr };
  } finally {
    client.dispose();
    if (child.exitCode === null) child.kill();
  }
}

const cacheFolder = (temp: string) => path.join(temp, `lightsop-code-cache-${process.getuid!()}`);

describe.runIf(posix)('the language server code cache', () => {
  let expected: Awaited<ReturnType<typeof session>>;
  beforeAll(async () => {
    if (!existsSync(path.join(root, 'packages/language-server/dist/server-main.cjs'))) {
      const build = spawnSync(process.execPath, [path.join(root, 'scripts/build.mjs')], { cwd: root, encoding: 'utf8' });
      if (build.status !== 0) throw new Error(`npm run build failed:\n${build.stdout}\n${build.stderr}`);
    }
    workspace = mkdtempSync(path.join(tmpdir(), 'lightsop-ls-cache-'));
    writeFileSync(path.join(workspace, 'lightsop.config.json'), JSON.stringify({ skills: './skills.mjs' }));
    writeFileSync(path.join(workspace, 'skills.mjs'), 'export default { fetch: { description: "Downloads", run: () => "page" } };\n');
    expected = await session(mkdtempSync(path.join(tmpdir(), 'lightsop-no-cache-')), { LIGHTSOP_CODE_CACHE: '0' });
    // The skills module was imported: `fetch` is known, `nope` is not.
    expect(expected.codes).toEqual(['unknown-command']);
    expect(expected.messages[0]).toContain("'nope'");
    expect(expected.exit).toBe(0);
    expect(expected.stderr).toBe('');
  }, 60_000);

  it('is written by a server that had none, to a private folder, and used by the next one', async () => {
    const temp = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    expect(await session(temp)).toEqual(expected);
    const dir = cacheFolder(temp);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir);
    expect(files).toHaveLength(1);
    const file = path.join(dir, files[0]!);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const written = statSync(file).mtimeMs;
    // The next server compiles from it (a cache V8 rejected would be written again) and still imports the skills module.
    expect(await session(temp)).toEqual(expected);
    expect(readdirSync(dir)).toEqual(files);
    expect(statSync(file).mtimeMs).toBe(written);
  }, 60_000);

  it('a corrupt cache is ignored and replaced', async () => {
    const temp = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    expect(await session(temp)).toEqual(expected);
    const file = path.join(cacheFolder(temp), readdirSync(cacheFolder(temp))[0]!);
    writeFileSync(file, 'not compiled code at all');
    expect(await session(temp)).toEqual(expected);
    expect(statSync(file).size).toBeGreaterThan(1000);
  }, 60_000);

  it('a folder others may write to is not used, LIGHTSOP_CODE_CACHE=0 and --version write nothing', async () => {
    const temp = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    mkdirSync(cacheFolder(temp));
    chmodSync(cacheFolder(temp), 0o777);
    expect(await session(temp)).toEqual(expected);
    expect(readdirSync(cacheFolder(temp))).toEqual([]);
    const off = mkdtempSync(path.join(tmpdir(), 'lightsop-cache-'));
    expect(await session(off, { LIGHTSOP_CODE_CACHE: '0' })).toEqual(expected);
    expect(existsSync(cacheFolder(off))).toBe(false);
    const version = spawnSync(process.execPath, [BIN, '--version'], { encoding: 'utf8', env: { ...process.env, TMPDIR: off, TMP: off, TEMP: off } });
    expect(version.stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
    expect(existsSync(cacheFolder(off)) ? readdirSync(cacheFolder(off)) : []).toEqual([]);
  }, 60_000);
});
