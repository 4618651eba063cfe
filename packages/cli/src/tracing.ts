/**
 * OpenTelemetry traces of runs and chat turns (docs/tracing.md). This module decides whether
 * tracing is on and defines what the commands report; it imports nothing of OpenTelemetry. The
 * exporter, the SDK and the API live in `./otel`, which esbuild puts in a chunk of its own that is
 * imported only when tracing is on, so `lint`, `fmt` and a plain `run` never load them
 * (test/cli/otel-loading.test.ts).
 */
import type { ModelCall } from '@lightsop/runtime';
import type { Io } from './io';
import { leaveWorkBehind } from './idle';
import { redact, rememberSecret, terminalText } from './terminal-text';

/** The longest wait for the spans to leave before the CLI exits anyway. */
export const TRACE_FLUSH_TIMEOUT_MS = 5000;

/** What a span of a declaration's command says when it ends. */
export interface CommandOutcome {
  status: string;
  /** For a failure or a cancellation: the reason (redacted and cut before export). */
  reason?: string;
}

/**
 * An MCP tool call (or any tool a session calls outside a plan's commands), for the hook
 * `RunTrace.toolCall`: nothing calls it yet; an MCP provider reports each call here.
 */
export interface ToolCall {
  name: string;
  /** The MCP server (its configured name), when there is one. */
  server?: string;
  startTime: number;
  endTime: number;
  error: string | null;
}

/** The span of a run (or of a chat turn) and what happens inside it. */
export interface RunTrace {
  commandStarted(variable: string, command: string, raw: string, lineNumber: number): void;
  commandSettled(variable: string, outcome: CommandOutcome): void;
  /** A model request, as `OpenAiAgentOptions.onCall` reports it: a child span with GenAI attributes. */
  modelCall(call: ModelCall): void;
  /** The hook for MCP tool calls: a child span `execute_tool NAME`. */
  toolCall(call: ToolCall): void;
  /** A child span for a part of the run (a chat turn). */
  child(name: string, attributes: Record<string, string | number | boolean>): RunTrace;
  /** Ends this span (and any command span still open); `error` marks it failed. */
  end(attributes: Record<string, string | number | boolean>, error?: string): void;
}

export interface Tracing {
  startRun(name: string, attributes: Record<string, string | number | boolean>): RunTrace;
  /** Exports what is left, waiting at most `TRACE_FLUSH_TIMEOUT_MS`; warns on stderr when it could not. */
  shutdown(): Promise<void>;
}

/**
 * Whether traces are wanted: `--otel`, or the standard OTLP endpoint variables; never when
 * OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none.
 */
export function tracingRequested(flag: boolean | undefined, env: NodeJS.ProcessEnv): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return false;
  if (env.OTEL_TRACES_EXPORTER?.trim().toLowerCase() === 'none') return false;
  return Boolean(flag || env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim());
}

/** The values of OTEL_EXPORTER_OTLP_HEADERS (and the traces one), remembered as secrets. */
function rememberHeaderSecrets(env: NodeJS.ProcessEnv): void {
  for (const raw of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    for (const pair of (raw ?? '').split(',')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const value = pair.slice(eq + 1).trim();
      rememberSecret(value);
      try {
        rememberSecret(decodeURIComponent(value));
      } catch {
        // Not percent-encoded.
      }
    }
  }
}

/**
 * Starts tracing when it is requested, else returns null without loading anything. A failure to
 * load or configure the exporter is a warning: the run goes on without traces.
 */
export async function startTracing(flag: boolean | undefined, env: NodeJS.ProcessEnv, io: Io): Promise<Tracing | null> {
  if (!tracingRequested(flag, env)) return null;
  rememberHeaderSecrets(env);
  try {
    const { createOtelTracing } = await import('./otel');
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
