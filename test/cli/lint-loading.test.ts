/**
 * `lightsop lint` of a simple plan loads only the lint bundle (issue 13 item 3): none of
 * commander, Chevrotain, tinyglobby, the OpenAI client, the MCP SDK, OpenTelemetry or BullMQ.
 * The loader fixture records every ES module and every CommonJS file the process loads; a file
 * holds a package when esbuild's source comments in it name a file under node_modules/PACKAGE.
 * The control cases (a broken quoted token, a glob, an option the fast path leaves to commander)
 * show that the check sees each package when it loads.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli';

const PRELOAD = pathToFileURL(path.join(repoRoot, 'test/distributed/fixtures/record-modules.mjs')).href;
const BIN = path.join(repoRoot, 'packages/cli/bin/lightsop.js');
const HEAVY = ['commander', 'chevrotain', 'tinyglobby', 'openai', '@modelcontextprotocol/sdk', '@opentelemetry/api', 'bullmq'];

function loadedBy(args: string[], cwd: string): { code: number; stderr: string; files: string[] } {
  const log = path.join(mkdtempSync(path.join(tmpdir(), 'lightsop-modules-')), 'modules.txt');
  writeFileSync(log, '');
  const res = spawnSync(process.execPath, ['--import', PRELOAD, BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', LIGHTSOP_MODULE_LOG: log },
    timeout: 60_000,
  });
  const files = [...new Set(readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u)))];
  return { code: res.status ?? -1, stderr: res.stderr, files };
}

/** The heavy packages whose code is in the loaded files. */
function packagesIn(files: string[]): string[] {
  const found = new Set<string>();
  for (const f of files) {
    const text = readFileSync(f, 'utf8');
    for (const name of HEAVY) if (f.includes(`${path.sep}node_modules${path.sep}${name}${path.sep}`) || text.includes(`node_modules/${name}/`)) found.add(name);
  }
  return [...found].sort();
}

const ours = (files: string[]) => files.filter((f) => f.startsWith(path.join(repoRoot, 'packages/cli'))).map((f) => path.relative(repoRoot, f)).sort();

describe('lint of a simple plan loads only what it uses', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'lightsop-lint-loading-'));
    writeFileSync(path.join(dir, 'plan.sop'), '@a assign "hello world"\n@lastAnswer echo $a\n');
    writeFileSync(path.join(dir, 'broken.sop'), '@a assign "hello\n');
  });

  it('a plain lint loads the lint bundle alone, with none of the heavy packages', () => {
    for (const args of [['lint', 'plan.sop'], ['lint', '--format', 'json', '-q', 'plan.sop']]) {
      const res = loadedBy(args, dir);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      expect(ours(res.files)).toEqual(['packages/cli/bin/lightsop.js', 'packages/cli/dist/lint.cjs']);
      expect(packagesIn(res.files)).toEqual([]);
    }
  }, 120_000);

  it('Chevrotain loads for a broken quoted token, tinyglobby for a glob (the check sees them)', () => {
    const broken = loadedBy(['lint', 'broken.sop'], dir);
    expect(broken.code, broken.stderr).toBe(1);
    expect(packagesIn(broken.files)).toEqual(['chevrotain']);
    const glob = loadedBy(['lint', '*.sop'], dir);
    expect(glob.code, glob.stderr).toBe(1);
    expect(packagesIn(glob.files)).toEqual(['chevrotain', 'tinyglobby']);
  }, 120_000);

  it('an invocation the fast path does not handle runs the full CLI (commander)', () => {
    const res = loadedBy(['lint', '--help'], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(ours(res.files)).toContain('packages/cli/dist/main.js');
    expect(packagesIn(res.files)).toContain('commander');
  }, 120_000);
});
