/**
 * The part of an OpenTelemetry `Tracer` the store uses. Declared here because `@opentelemetry/api` is an
 * optional peer: a `Tracer` from it fits.
 */
export interface TelemetryTracer {
  /** Starts a span (OpenTelemetry `Tracer.startSpan`). */
  startSpan(name: string, options?: unknown, context?: unknown): unknown
}

/** The part of an OpenTelemetry `Meter` the store uses; a `Meter` from `@opentelemetry/api` fits. */
export interface TelemetryMeter {
  /** Creates a histogram (OpenTelemetry `Meter.createHistogram`). */
  createHistogram(name: string, options?: unknown): unknown
  /** Creates a counter (OpenTelemetry `Meter.createCounter`). */
  createCounter(name: string, options?: unknown): unknown
}

/**
 * Where a store sends its spans and metrics (docs/operations.md, "Tracing and metrics"). Absent: the
 * global tracer and meter providers of `@opentelemetry/api`, when that package is installed and a
 * provider is registered (looked up on every call, so a provider registered after `openStore` counts).
 * `false`: none, whatever is registered. A `tracer` or `meter` given here is used instead of the global
 * one (the other still comes from the global provider).
 */
export interface TelemetryConfig {
  /** The tracer every store call starts its span with. */
  readonly tracer?: TelemetryTracer
  /** The meter the store's instruments are created with. */
  readonly meter?: TelemetryMeter
}
