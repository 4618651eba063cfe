/**
 * Only `lightsop mcp` loads the MCP SDK: it sits in a chunk of the CLI bundle that main.ts imports
 * dynamically. A loader hook records every module the built CLI loads (the distributed tests'
 * fixture); the control case (`mcp`) shows that the check sees the SDK when it is loaded.
 */
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt, repoRoot } from '../helpers/cli';
import { removeTempDirs, tempDir } from '../distributed/procs';
import { BIN } from './fixture';

const PRELOAD = pathToFileURL(path.join(__dirname, '../distributed/fixtures/record-modules.mjs')).href;
// Strings found only in the MCP SDK's code (its server and its protocol layer).
const MARKERS = ['Server does not support tools (required for ', 'Received a progress notification for an unknown token'];

function loadedBy(args: string[], cwd: string, input = ''): { code: number; stderr: string; files: string[] } {
  const log = path.join(tempDir('lightsop-modules-'), 'modules.txt');
  writeFileSync(log, '');
  const res = spawnSync(process.execPath, ['--import', PRELOAD, BIN, ...args], {
    cwd,
    input,
    encoding: 'utf8',
    env: { ...process.env, NO_COLOR: '1', LIGHTSOP_MODULE_LOG: log },
    timeout: 60_000,
  });
  const files = readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
  return { code: res.status ?? -1, stderr: res.stderr, files };
}

function loadsSdk(files: string[]): boolean {
  return files.some((f) => /[\\/]@modelcontextprotocol[\\/]/.test(f) || MARKERS.some((m) => readFileSync(f, 'utf8').includes(m)));
}

describe('the CLI loads the MCP SDK only for lightsop mcp', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = tempDir('lightsop-loading-');
    writeFileSync(path.join(dir, 'plan.sop'), '@a assign hello\n@lastAnswer assign $a\n');
  });
  afterAll(() => removeTempDirs());

  it('lint, fmt, graph and run do not load it', () => {
    for (const args of [['lint', 'plan.sop'], ['fmt', 'plan.sop'], ['graph', 'plan.sop'], ['run', 'plan.sop', '--json']]) {
      const res = loadedBy(args, dir);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      expect(res.files.some((f) => f.startsWith(path.join(repoRoot, 'packages/cli/dist')))).toBe(true);
      expect(loadsSdk(res.files), `lightsop ${args.join(' ')} loaded the MCP SDK`).toBe(false);
    }
  });

  it('mcp does (the control: the check sees it when it loads)', () => {
    // Standard input closes at once: the server starts, sees the end of its input and exits 0.
    const res = loadedBy(['mcp'], dir);
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/serving .* on stdio/);
    expect(loadsSdk(res.files)).toBe(true);
  });
});
