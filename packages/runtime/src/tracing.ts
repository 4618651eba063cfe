/**
 * What a run reports to a trace (docs/tracing.md), and whether traces are wanted. Nothing of
 * OpenTelemetry is imported here: hosts (the CLI, the extension) load `@lightsop/runtime/otel`
 * only when `tracingRequested` says so, so a run without traces never loads the SDK.
 */
import type { ModelCall } from './llm/agent';

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
  /** Exports what is left, waiting at most the flush timeout the host gave; warns when it could not. */
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


/**
 * The values of OTEL_EXPORTER_OTLP_HEADERS and OTEL_EXPORTER_OTLP_TRACES_HEADERS (`Authorization=Bearer%20...`),
 * as written and percent-decoded: secrets a host keeps out of every output.
 */
export function otlpHeaderSecrets(env: NodeJS.ProcessEnv): string[] {
  const out: string[] = [];
  for (const raw of [env.OTEL_EXPORTER_OTLP_HEADERS, env.OTEL_EXPORTER_OTLP_TRACES_HEADERS]) {
    for (const pair of (raw ?? '').split(',')) {
      const eq = pair.indexOf('=');
      if (eq < 0) continue;
      const value = pair.slice(eq + 1).trim();
      out.push(value);
      try {
        out.push(decodeURIComponent(value));
      } catch {
        // Not percent-encoded.
      }
    }
  }
  return out;
}
