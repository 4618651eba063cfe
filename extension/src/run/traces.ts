/**
 * OpenTelemetry traces of Run Plan (docs/tracing.md): on with the `lightsop.run.otel` setting or
 * the standard OTLP variables in VS Code's environment (`OTEL_EXPORTER_OTLP_ENDPOINT`, ...), as
 * `--otel` and the same variables turn them on for `lightsop run`. The endpoint and its headers
 * come from the environment only, never from a setting, so no token is ever a setting.
 *
 * Nothing of OpenTelemetry is in the extension's bundle: `@lightsop/runtime/otel` is built to
 * dist/otel.cjs, and `loadBundledOtel` imports it on the first traced run (test/extension/traces.test.ts
 * checks both). Pure of `vscode`, so the test drives it with a real OTLP receiver.
 */
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { otlpHeaderSecrets, redactSecrets, tracingRequested, type ModelCall, type RunEvent, type RunTrace, type Tracing, type Value } from '@lightsop/runtime';
import type { createOtelTracing } from '@lightsop/runtime/otel';

/** The longest wait for a run's spans to leave; the run's result never waits for it. */
export const TRACE_FLUSH_TIMEOUT_MS = 5000;

export type OtelLoader = () => Promise<{ createOtelTracing: typeof createOtelTracing }>;

/** Loads `@lightsop/runtime/otel` from the file the build puts next to the extension's bundle. */
export function loadBundledOtel(distFolder: string): OtelLoader {
  return () => import(pathToFileURL(path.join(distFolder, 'otel.cjs')).href) as Promise<{ createOtelTracing: typeof createOtelTracing }>;
}

export interface RunTracingOptions {
  /** The `lightsop.run.otel` setting. */
  readonly setting: boolean;
  readonly env: NodeJS.ProcessEnv;
  readonly load: OtelLoader;
  readonly version: string;
  /** Secrets that must not reach a span or a warning (the API key); the OTLP header values, bearer tokens and URL credentials always go. */
  readonly secrets: () => Promise<readonly string[]>;
  /** Where warnings go (the output channel): a failed export never fails a run. */
  readonly warn: (message: string) => void;
}

/** One traced run: feed it the interpreter's events and model calls, then end it. */
export class TracedRun {
  private settled = false;

  constructor(private readonly tracing: Tracing, private readonly span: RunTrace) {}

  onEvent(e: RunEvent, valueOf: (name: string) => Value | undefined, text: (value: Value) => string): void {
    if (e.type === 'command-started') {
      this.span.commandStarted(e.variable, e.command, e.raw, e.lineNumber);
    } else if (e.type === 'variable-settled') {
      const value = e.status === 'success' ? undefined : valueOf(e.variable);
      this.span.commandSettled(e.variable, { status: e.status, reason: value ? text(value) : undefined });
    }
  }

  modelCall(call: ModelCall): void {
    this.span.modelCall(call);
  }

  /** Ends the run's span and exports it (bounded by TRACE_FLUSH_TIMEOUT_MS); the caller need not wait. */
  async end(attributes: Record<string, string | number | boolean>, error?: string): Promise<void> {
    if (this.settled) return;
    this.settled = true;
    this.span.end(attributes, error);
    await this.tracing.shutdown();
  }
}

/**
 * Starts a run's trace when traces are wanted, else returns null without loading anything. A
 * failure to load or configure the exporter is a warning: the run goes on without traces.
 */
export async function startRunTrace(name: string, attributes: Record<string, string | number | boolean>, o: RunTracingOptions): Promise<TracedRun | null> {
  if (!tracingRequested(o.setting, o.env)) return null;
  const secrets = otlpHeaderSecrets(o.env).concat(await o.secrets());
  const redact = (text: string) => redactSecrets(text, secrets);
  try {
    const { createOtelTracing } = await o.load();
    const tracing = createOtelTracing({
      env: o.env,
      version: o.version,
      redact,
      warn: (message) => o.warn(redact(message)),
      flushTimeoutMs: TRACE_FLUSH_TIMEOUT_MS,
      onGiveUp: () => undefined,
    });
    return new TracedRun(tracing, tracing.startRun(name, attributes));
  } catch (error) {
    o.warn(`traces are off: ${redact(error instanceof Error ? error.message : String(error))}`);
    return null;
  }
}
