import type { Args } from './parse-args.js'
import { record } from './record.js'
import type { Summary } from './stats.js'
import { measureTelemetryOverhead } from './telemetry-overhead.js'

/** Two rows: `load` with OpenTelemetry providers vs telemetry off, and the wrapper's cost alone. */
export async function recordTelemetryOverhead(connectionString: string, args: Args): Promise<void> {
  const t = await measureTelemetryOverhead(connectionString, args.runs, args.quick)
  const ns = (s: Summary): string => `${s.median.toFixed(0)} ns`
  record({
    workload: 'telemetry: load with OpenTelemetry providers (no-op exporter)',
    unit: 'µs/call',
    turnlog: t.loadProvider,
    baseline: t.loadOff,
    baselineName: 'telemetry: false (= no @opentelemetry/api)',
    goal: 'reported',
    goalRatio: null,
    higherIsBetter: false,
    notes: `${t.loadsPerRun} sequential loads of a 20-message session per run; with the api installed but no provider registered ${t.loadNoProvider.median.toFixed(1)} µs/call`,
  })
  record({
    workload: 'telemetry: the wrapper alone, no provider registered',
    unit: 'ns/call',
    turnlog: t.wrapperNoProvider,
    baseline: t.wrapperOff,
    baselineName: 'telemetry: false',
    goal: '≈ 1×',
    goalRatio: null,
    higherIsBetter: false,
    notes: `${t.callsPerRun} awaited calls of a settled operation per run: no wrapper ${ns(t.wrapperNone)}, telemetry off ${ns(t.wrapperOff)}, no provider ${ns(t.wrapperNoProvider)}, providers with a no-op exporter ${ns(t.wrapperProvider)}`,
  })
}
