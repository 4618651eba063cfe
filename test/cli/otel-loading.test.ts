/**
 * Nothing of OpenTelemetry is loaded unless traces are asked for (issue 15 item 5): the SDK and
 * the exporter sit in chunks of the CLI bundle that only `startTracing` imports. A loader hook
 * records every module the built CLI loads; a module is OpenTelemetry's when esbuild's source
 * comments in it name a file under node_modules/@opentelemetry. The control case (the same run
 * with OTEL_EXPORTER_OTLP_ENDPOINT set) shows that the check sees them when they load.
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

function loadedBy(args: string[], cwd: string, env: Record<string, string> = {}): { code: number; stderr: string; files: string[] } {
  const log = path.join(mkdtempSync(path.join(tmpdir(), 'lightsop-modules-')), 'modules.txt');
  writeFileSync(log, '');
  // Without OTEL_* from the environment of whoever runs the tests.
  const base = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('OTEL_')));
  const res = spawnSync(process.execPath, ['--import', PRELOAD, BIN, ...args], {
    cwd,
    encoding: 'utf8',
    env: { ...base, NO_COLOR: '1', LIGHTSOP_MODULE_LOG: log, ...env },
    timeout: 60_000,
  });
  const files = readFileSync(log, 'utf8').split('\n').filter((u) => u.startsWith('file:')).map((u) => fileURLToPath(u));
  return { code: res.status ?? -1, stderr: res.stderr, files };
}

function loadsOtel(files: string[]): boolean {
  return files.some((f) => /[\\/]@opentelemetry[\\/]/.test(f) || readFileSync(f, 'utf8').includes('node_modules/@opentelemetry/'));
}

describe('the CLI loads OpenTelemetry only when traces are asked for', () => {
  let dir: string;
  beforeAll(() => {
    ensureBuilt();
    dir = mkdtempSync(path.join(tmpdir(), 'lightsop-otel-loading-'));
    writeFileSync(path.join(dir, 'plan.sop'), '@a assign hello\n@lastAnswer assign $a\n');
  });

  it('lint, fmt, graph and a plain run do not load it', () => {
    for (const args of [['lint', 'plan.sop'], ['fmt', 'plan.sop'], ['graph', 'plan.sop'], ['run', 'plan.sop', '--json']]) {
      const res = loadedBy(args, dir);
      expect(res.code, `${args.join(' ')}: ${res.stderr}`).toBe(0);
      expect(res.files.some((f) => f.startsWith(path.join(repoRoot, 'packages/cli/dist')))).toBe(true);
      expect(loadsOtel(res.files), `lightsop ${args.join(' ')} loaded OpenTelemetry`).toBe(false);
    }
  }, 120_000);

  it('a run with OTEL_EXPORTER_OTLP_ENDPOINT does (the control: the check sees it when it loads)', () => {
    // Nothing listens on port 9: the export fails within OTEL_EXPORTER_OTLP_TIMEOUT and is a warning.
    const res = loadedBy(['run', 'plan.sop', '--json'], dir, { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '200' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/^lightsop: warning: .*traces/);
    expect(loadsOtel(res.files)).toBe(true);
  }, 120_000);
});
