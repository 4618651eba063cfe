/**
 * The OpenTelemetry side of tracing (docs/tracing.md), loaded only when tracing is on (see
 * `../tracing.ts`; hosts import this entry, `@lightsop/runtime/otel`, dynamically): a tracer provider of its own (nothing global is registered), a batch processor
 * and the OTLP/HTTP exporter, which reads the standard variables (OTEL_EXPORTER_OTLP_ENDPOINT,
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT, ...)
 * itself. Spans carry names, statuses and short, redacted texts; never a header, a key or a value
 * the CLI keeps secret.
 */
import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Context, type Span, type Tracer } from '@opentelemetry/api';
import { ExportResultCode, type ExportResult } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { defaultResource, detectResources, envDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { BasicTracerProvider, BatchSpanProcessor, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace-base';
import { ATTR_ERROR_TYPE, ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } from '@opentelemetry/semantic-conventions';
import {
  ATTR_GEN_AI_OPERATION_NAME, ATTR_GEN_AI_REQUEST_MODEL, ATTR_GEN_AI_RESPONSE_MODEL, ATTR_GEN_AI_TOOL_NAME, ATTR_GEN_AI_USAGE_INPUT_TOKENS,
  ATTR_GEN_AI_USAGE_OUTPUT_TOKENS, GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL,
} from '@opentelemetry/semantic-conventions/incubating';
import type { ModelCall } from '../llm/agent';
import type { CommandOutcome, RunTrace, ToolCall, Tracing } from '../tracing';

/** The longest text an attribute or a status message carries. */
const MAX_TEXT = 1024;

export interface OtelTracingOptions {
  env: NodeJS.ProcessEnv;
  version: string;
  /** Removes remembered secrets, URL credentials and bearer tokens. */
  redact: (text: string) => string;
  warn: (message: string) => void;
  flushTimeoutMs: number;
  /** Called when the flush is given up on (the CLI then exits without waiting for the exporter). */
  onGiveUp: () => void;
}

/** Where the spans go, as the warnings name it (the exporter computes the same from the same variables). */
function endpointOf(env: NodeJS.ProcessEnv): string {
  const traces = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim();
  if (traces) return traces;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim();
  if (base) return `${base.replace(/\/+$/, '')}/v1/traces`;
  return 'http://localhost:4318/v1/traces';
}

/** The exporter, remembering the last failure so the CLI can say that spans were lost. */
class WatchedExporter implements SpanExporter {
  failure: string | null = null;
  constructor(private readonly inner: SpanExporter) {}
  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.inner.export(spans, (result) => {
      if (result.code !== ExportResultCode.SUCCESS) this.failure = result.error?.message ?? 'export failed';
      done(result);
    });
  }
  shutdown(): Promise<void> {
    return this.inner.shutdown();
  }
  forceFlush(): Promise<void> {
    return this.inner.forceFlush?.() ?? Promise.resolve();
  }
}

export function createOtelTracing(options: OtelTracingOptions): Tracing {
  const text = (value: string) => {
    const cut = options.redact(value.slice(0, MAX_TEXT * 2));
    return cut.length > MAX_TEXT ? `${cut.slice(0, MAX_TEXT)}…` : cut;
  };
  const exporter = new WatchedExporter(new OTLPTraceExporter());
  const serviceName = options.env.OTEL_SERVICE_NAME?.trim() || 'lightsop';
  const resource = defaultResource()
    .merge(detectResources({ detectors: [envDetector] }))
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, [ATTR_SERVICE_VERSION]: options.version }));
  const provider = new BasicTracerProvider({
    resource,
    spanProcessors: [new BatchSpanProcessor(exporter)],
    spanLimits: { attributeValueLengthLimit: MAX_TEXT * 2 },
  });
  const tracer = provider.getTracer('lightsop', options.version);

  const startTrace = (name: string, attributes: Attributes, parent: Context): RunTrace => {
    const span = tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, parent);
    return new OtelRunTrace(tracer, span, text);
  };

  return {
    startRun: (name, attributes) => startTrace(name, attributes, ROOT_CONTEXT),
    async shutdown() {
      let timer: ReturnType<typeof setTimeout> | undefined;
      const gaveUp = await Promise.race([
        provider.shutdown().then(() => false, (error: unknown) => {
          exporter.failure ??= error instanceof Error ? error.message : String(error);
          return false;
        }),
        new Promise<boolean>((resolve) => {
          timer = setTimeout(() => resolve(true), options.flushTimeoutMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
      const where = endpointOf(options.env);
      if (gaveUp) {
        options.warn(`traces were not all exported to ${where} within ${options.flushTimeoutMs / 1000} s`);
        options.onGiveUp();
      } else if (exporter.failure) {
        options.warn(`could not export traces to ${where}: ${exporter.failure}`);
      }
    },
  };
}

class OtelRunTrace implements RunTrace {
  private readonly context: Context;
  private readonly open = new Map<string, Span>();
  private ended = false;

  constructor(private readonly tracer: Tracer, private readonly span: Span, private readonly text: (value: string) => string) {
    this.context = trace.setSpan(ROOT_CONTEXT, span);
  }

  commandStarted(variable: string, command: string, raw: string, lineNumber: number): void {
    if (this.ended) return;
    this.open.get(variable)?.end();
    this.open.set(variable, this.tracer.startSpan(`command ${command}`, {
      kind: SpanKind.INTERNAL,
      attributes: { 'lightsop.declaration': variable, 'lightsop.command': command, 'lightsop.command.text': this.text(raw), 'lightsop.line': lineNumber },
    }, this.context));
  }

  commandSettled(variable: string, outcome: CommandOutcome): void {
    const span = this.open.get(variable);
    if (!span) return;
    this.open.delete(variable);
    this.finishCommand(span, outcome);
  }

  private finishCommand(span: Span, outcome: CommandOutcome): void {
    span.setAttribute('lightsop.status', outcome.status);
    if (outcome.status === 'fail') span.setStatus({ code: SpanStatusCode.ERROR, message: this.text(outcome.reason ?? 'failed') });
    else if (outcome.status === 'success') span.setStatus({ code: SpanStatusCode.OK });
    else if (outcome.reason) span.setAttribute('lightsop.reason', this.text(outcome.reason));
    span.end();
  }

  modelCall(call: ModelCall): void {
    if (this.ended) return;
    const attributes: Attributes = {
      [ATTR_GEN_AI_OPERATION_NAME]: call.operation,
      [ATTR_GEN_AI_REQUEST_MODEL]: call.requestModel,
    };
    if (call.responseModel) attributes[ATTR_GEN_AI_RESPONSE_MODEL] = call.responseModel;
    if (call.usage) {
      attributes[ATTR_GEN_AI_USAGE_INPUT_TOKENS] = call.usage.inputTokens;
      attributes[ATTR_GEN_AI_USAGE_OUTPUT_TOKENS] = call.usage.outputTokens;
    }
    const span = this.tracer.startSpan(`${call.operation} ${call.requestModel}`, { kind: SpanKind.CLIENT, startTime: call.startTime, attributes }, this.context);
    if (call.error) {
      span.setAttribute(ATTR_ERROR_TYPE, call.error === 'aborted' ? 'aborted' : 'request_failed');
      span.setStatus({ code: SpanStatusCode.ERROR, message: this.text(call.error) });
    }
    span.end(call.endTime);
  }

  toolCall(call: ToolCall): void {
    if (this.ended) return;
    const attributes: Attributes = { [ATTR_GEN_AI_OPERATION_NAME]: GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL, [ATTR_GEN_AI_TOOL_NAME]: call.name };
    if (call.server) attributes['lightsop.mcp.server'] = call.server;
    const span = this.tracer.startSpan(`${GEN_AI_OPERATION_NAME_VALUE_EXECUTE_TOOL} ${call.name}`, { kind: SpanKind.INTERNAL, startTime: call.startTime, attributes }, this.context);
    if (call.error) span.setStatus({ code: SpanStatusCode.ERROR, message: this.text(call.error) });
    span.end(call.endTime);
  }

  child(name: string, attributes: Attributes): RunTrace {
    const span = this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, this.context);
    return new OtelRunTrace(this.tracer, span, this.text);
  }

  end(attributes: Attributes, error?: string): void {
    if (this.ended) return;
    this.ended = true;
    // Commands the run stopped waiting for end with it.
    for (const span of this.open.values()) this.finishCommand(span, { status: 'canceled', reason: 'still running when the run ended' });
    this.open.clear();
    this.span.setAttributes(attributes);
    if (error !== undefined) this.span.setStatus({ code: SpanStatusCode.ERROR, message: this.text(error) });
    else this.span.setStatus({ code: SpanStatusCode.OK });
    this.span.end();
  }
}
