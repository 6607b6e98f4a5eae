import { context, metrics, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { MeterProvider, MetricReader } from '@opentelemetry/sdk-metrics'
import { BatchSpanProcessor, TracerProvider, type ReadableSpan, type SpanExporter } from '@opentelemetry/sdk-trace'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { loadOpenTelemetry, StoreTelemetry } from '@turnlog/postgres/internal'
import { summarize, type Summary } from './stats.js'

/** What {@link measureTelemetryOverhead} measured: medians over the runs. */
export interface TelemetryOverhead {
  /** `load` of a 20-message session on Postgres, µs per call: telemetry off, on without providers, on with providers. */
  readonly loadOff: Summary
  readonly loadNoProvider: Summary
  readonly loadProvider: Summary
  /** The wrapper alone around an already-settled operation, ns per call (the same three, and no wrapper). */
  readonly wrapperNone: Summary
  readonly wrapperOff: Summary
  readonly wrapperNoProvider: Summary
  readonly wrapperProvider: Summary
  readonly loadsPerRun: number
  readonly callsPerRun: number
}

/** An exporter that drops every span: the cost measured is the store's and the SDK's, not an export's. */
class DropExporter implements SpanExporter {
  export(_spans: ReadableSpan[], done: (result: { code: 0 }) => void): void {
    done({ code: 0 })
  }
  async shutdown(): Promise<void> {}
}

/** A metric reader nobody collects from: the instruments still aggregate. */
class IdleReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/**
 * Registers global tracer and meter providers (a batching span processor, a no-op exporter) and the
 * async-hooks context manager, as an application's SDK setup does; returns their removal.
 */
function registerProviders(): () => Promise<void> {
  const tracerProvider = new TracerProvider({ spanProcessors: [new BatchSpanProcessor({ exporter: new DropExporter() })] })
  const meterProvider = new MeterProvider({ readers: [new IdleReader()] })
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)
  return async () => {
    trace.disable()
    metrics.disable()
    context.disable()
    await tracerProvider.shutdown()
    await meterProvider.shutdown()
  }
}

/**
 * The cost of the store's OpenTelemetry spans and metrics (docs/operations.md, "Tracing and metrics"):
 * sequential `load` calls on Postgres with `telemetry: false` (the same branch as no
 * `@opentelemetry/api` installed), with the api but no provider registered, and with global providers
 * whose exporter drops everything; and the wrapper alone (ns per call). The three settings alternate
 * within each run. Leaves no provider registered.
 */
export async function measureTelemetryOverhead(connectionString: string, runs: number, quick: boolean): Promise<TelemetryOverhead> {
  await loadOpenTelemetry()
  const off = await openStore({ connectionString, migrate: false, telemetry: false, pool: { max: 2 } })
  const auto = await openStore({ connectionString, migrate: false, pool: { max: 2 } })
  const loadsPerRun = quick ? 300 : 2000
  const callsPerRun = quick ? 100_000 : 500_000
  const result = {
    loadOff: [] as number[],
    loadNoProvider: [] as number[],
    loadProvider: [] as number[],
    wrapperNone: [] as number[],
    wrapperOff: [] as number[],
    wrapperNoProvider: [] as number[],
    wrapperProvider: [] as number[],
  }
  try {
    const session = await off.createSession()
    await off.append(
      session,
      Array.from({ length: 20 }, (_, i) =>
        createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `message ${i} `.repeat(20) }),
      ),
    )
    const loads = async (store: typeof off): Promise<number> => {
      const t0 = performance.now()
      for (let i = 0; i < loadsPerRun; i++) await store.load(session)
      return ((performance.now() - t0) * 1000) / loadsPerRun
    }
    const settled = (): Promise<number> => Promise.resolve(1)
    const wrapperOff = new StoreTelemetry(false)
    const wrapperAuto = new StoreTelemetry(undefined)
    const wrapped = async (telemetry: StoreTelemetry | null): Promise<number> => {
      const t0 = performance.now()
      for (let i = 0; i < callsPerRun; i++) {
        if (telemetry === null) await settled()
        else await telemetry.span('load', 'turnlog.load', session, settled)
      }
      return ((performance.now() - t0) * 1e6) / callsPerRun
    }
    // warm-up: plans, connections, JIT of the loops
    await loads(off)
    await loads(auto)
    for (let run = 0; run < runs; run++) {
      result.loadOff.push(await loads(off))
      result.loadNoProvider.push(await loads(auto))
      result.wrapperNone.push(await wrapped(null))
      result.wrapperOff.push(await wrapped(wrapperOff))
      result.wrapperNoProvider.push(await wrapped(wrapperAuto))
      const unregister = registerProviders()
      try {
        result.loadProvider.push(await loads(auto))
        result.wrapperProvider.push(await wrapped(wrapperAuto))
      } finally {
        await unregister()
      }
    }
  } finally {
    await off.close()
    await auto.close()
  }
  return {
    loadOff: summarize(result.loadOff),
    loadNoProvider: summarize(result.loadNoProvider),
    loadProvider: summarize(result.loadProvider),
    wrapperNone: summarize(result.wrapperNone),
    wrapperOff: summarize(result.wrapperOff),
    wrapperNoProvider: summarize(result.wrapperNoProvider),
    wrapperProvider: summarize(result.wrapperProvider),
    loadsPerRun,
    callsPerRun,
  }
}
