/**
 * Nothing of OpenTelemetry is loaded unless traces are asked for (issue 15 item 5): the SDK and
 * the exporter sit in chunks of the CLI bundle that only `startTracing` imports. A loader hook
 * records every module the built CLI loads; a module is OpenTelemetry's when esbuild's source
 * comments in it name a file under node_modules/@opentelemetry. The control case (the same run
 * with OTEL_EXPORTER_OTLP_ENDPOINT set) shows that the check sees them when they load.
 */
import { describe, expect, it } from 'vitest';
import { expectLoadsNone, LIGHT_COMMANDS, loadsPackage, modulesLoadedBy, usePlanFolder } from '../helpers/loading';

const loadedBy = (args: string[], cwd: string, env: Record<string, string> = {}) => modulesLoadedBy(args, cwd, { env });
const loadsOtel = (files: string[]): boolean => loadsPackage(files, /[\\/]@opentelemetry[\\/]/, ['node_modules/@opentelemetry/']);

describe('the CLI loads OpenTelemetry only when traces are asked for', () => {
  const dir = usePlanFolder('lightsop-otel-loading-');

  it('lint, fmt, graph and a plain run do not load it', () => {
    expectLoadsNone(LIGHT_COMMANDS, dir(), { OpenTelemetry: loadsOtel });
  }, 120_000);

  it('a run with OTEL_EXPORTER_OTLP_ENDPOINT does (the control: the check sees it when it loads)', () => {
    // Nothing listens on port 9: the export fails within OTEL_EXPORTER_OTLP_TIMEOUT and is a warning.
    const res = loadedBy(['run', 'plan.sop', '--json'], dir(), { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:9', OTEL_EXPORTER_OTLP_TIMEOUT: '200' });
    expect(res.code, res.stderr).toBe(0);
    expect(res.stderr).toMatch(/^lightsop: warning: .*traces/);
    expect(loadsOtel(res.files)).toBe(true);
  }, 120_000);
});
