/**
 * `@lightsop/runtime/otel`: OpenTelemetry traces of runs over OTLP/HTTP (docs/tracing.md). Import
 * it dynamically, only when `tracingRequested` (from `@lightsop/runtime`) is true.
 */
export { createOtelTracing, type OtelTracingOptions } from './otel';
