/**
 * OpenTelemetry traces of runs and chat turns (docs/tracing.md). This module decides whether
 * tracing is on and defines what the commands report; it imports nothing of OpenTelemetry. The
 * exporter, the SDK and the API live in `@lightsop/runtime/otel`, which esbuild puts in a chunk of its
 * own that is imported only when tracing is on, so `lint`, `fmt` and a plain `run` never load them
 * (test/cli/otel-loading.test.ts).
 */
import { otlpHeaderSecrets, tracingRequested, type Tracing } from '@lightsop/runtime';
export type { CommandOutcome, RunTrace, ToolCall, Tracing } from '@lightsop/runtime';
import type { Io } from './io';
import { leaveWorkBehind } from './idle';
import { redact, rememberSecret, terminalText } from './terminal-text';

/** The longest wait for the spans to leave before the CLI exits anyway. */
export const TRACE_FLUSH_TIMEOUT_MS = 5000;

/**
 * Starts tracing when it is requested, else returns null without loading anything. A failure to
 * load or configure the exporter is a warning: the run goes on without traces.
 */
export async function startTracing(flag: boolean | undefined, env: NodeJS.ProcessEnv, io: Io): Promise<Tracing | null> {
  if (!tracingRequested(flag, env)) return null;
  for (const secret of otlpHeaderSecrets(env)) rememberSecret(secret);
  try {
    const { createOtelTracing } = await import('@lightsop/runtime/otel');
    return createOtelTracing({
      env,
      version: io.version,
      redact: (text) => redact(text),
      warn: (message) => io.stderr(`lightsop: warning: ${terminalText(redact(message))}\n`),
      flushTimeoutMs: TRACE_FLUSH_TIMEOUT_MS,
      onGiveUp: () => leaveWorkBehind(),
    });
  } catch (error) {
    io.stderr(`lightsop: warning: traces are off: ${terminalText(redact(error instanceof Error ? error.message : String(error)))}\n`);
    return null;
  }
}
