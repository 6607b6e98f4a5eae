import type * as OpenTelemetry from '@opentelemetry/api'

/** The `@opentelemetry/api` module, as a dynamic import gives it. */
export type OpenTelemetryApi = typeof OpenTelemetry

let loaded: OpenTelemetryApi | null | undefined
let loading: Promise<OpenTelemetryApi | null> | undefined

/**
 * Imports `@opentelemetry/api` once per process (an optional peer dependency): the module, or null when
 * it is not installed. `openStore` awaits it, so a store it opens knows from its first call.
 */
export function loadOpenTelemetry(): Promise<OpenTelemetryApi | null> {
  loading ??= import('@opentelemetry/api').then(
    (api) => (loaded = api),
    () => (loaded = null),
  )
  return loading
}

/** What {@link loadOpenTelemetry} found: the module, null (not installed), or undefined (not loaded yet). */
export function loadedOpenTelemetry(): OpenTelemetryApi | null | undefined {
  return loaded
}
