/**
 * Nothing of OpenTelemetry is loaded unless traces are asked for (issue 15 item 5): the SDK and
 * the exporter sit in chunks of the CLI bundle that only `startTracing` imports. A loader hook
 * records every module the built CLI loads; a module is OpenTelemetry's when esbuild's source
 * comments in it name a file under node_modules/@opentelemetry. The control case (the same run
 * with OTEL_EXPORTER_OTLP_ENDPOINT set) shows that the check sees them when they load.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { ensureBuilt } from '../helpers/cli';
import { loadsCliBundle, loadsPackage, modulesLoadedBy } from '../helpers/loading';

const loadedBy = (args: string[], cwd: string, env: Record<string, string> = {}) => modulesLoadedBy(args, cwd, { env });
const loadsOtel = (files: string[]): boolean => loadsPackage(files, /[\\/]@opentelemetry[\\/]/, ['node_modules/@opentelemetry/']);

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
      expect(loadsCliBundle(res.files)).toBe(true);
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
