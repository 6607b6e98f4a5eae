/**
 * OpenTelemetry spans and metrics of the store (docs/operations.md, "Tracing and metrics"), on Postgres
 * and PGlite: one span per public call with its attributes, the error code of a failure, no second span
 * for a store call made inside another, the caller's span as parent and the driver's queries inside the
 * store's span, the metrics; and nothing at all without providers or with `telemetry: false`.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import { context, metrics, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import pg from 'pg'

/** A reader the test collects from on demand. */
class TestMetricReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

const user = (content: string): Message => createMessage({ role: 'user', content })

let db: TestDatabase
/** The span ids that were active when the pg client sent a query (what instrumentation-pg would parent its span to). */
const querySpans: (string | undefined)[] = []

/** A pg client that notes the active span of each query: the point instrumentation-pg patches. */
class RecordingClient extends pg.Client {
  override query(...args: unknown[]): never {
    querySpans.push(trace.getActiveSpan()?.spanContext().spanId)
    return (super.query as (...a: unknown[]) => never)(...args)
  }
}

beforeAll(async () => {
  db = await createTestDatabase()
})

afterAll(async () => {
  await db?.drop()
})

interface Telemetry {
  readonly exporter: InMemorySpanExporter
  readonly reader: TestMetricReader
  readonly spans: () => ReadableSpan[]
  readonly metric: (name: string) => Promise<MetricData | undefined>
  readonly shutdown: () => Promise<void>
}

/** Registers global tracer and meter providers (in-memory), and the async-hooks context manager. */
function registerTelemetry(): Telemetry {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const reader = new TestMetricReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
  trace.setGlobalTracerProvider(tracerProvider)
  metrics.setGlobalMeterProvider(meterProvider)
  return {
    exporter,
    reader,
    spans: () => exporter.getFinishedSpans().filter((s) => s.name.startsWith('turnlog.')),
    metric: async (name) => {
      const { resourceMetrics } = await reader.collect()
      return resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name)
    },
    shutdown: async () => {
      trace.disable()
      metrics.disable()
      context.disable()
      await tracerProvider.shutdown()
      await meterProvider.shutdown()
    },
  }
}

const flavors = [
  ['Postgres', () => openStore({ connectionString: db.connectionString, pool: { max: 4, Client: RecordingClient } })],
  ['PGlite', () => openStore({ embedded: true })],
] as const

describe.each(flavors)('%s', (flavor, open) => {
  let store: PostgresStore
  let t: Telemetry

  beforeAll(async () => {
    t = registerTelemetry()
    store = await open()
  })

  afterAll(async () => {
    await store?.close()
    await t?.shutdown()
  })

  afterEach(() => {
    t.exporter.reset()
  })

  it('append: one span with the session id, the counts and the version', async () => {
    // given
    const session = await store.createSession()
    t.exporter.reset()
    // when
    await store.append(session, [user('a'), user('b')])
    // then
    const spans = t.spans()
    expect(spans.map((s) => s.name)).toEqual(['turnlog.append'])
    expect(spans[0]?.attributes).toMatchObject({
      'db.system.name': 'postgresql',
      'db.operation.name': 'append',
      'gen_ai.conversation.id': session,
      'turnlog.messages.appended': 2,
      'turnlog.messages.duplicates': 0,
      'turnlog.session.version': 2,
    })
    expect(spans[0]?.status.code).toBe(SpanStatusCode.UNSET)
  })

  it('flush: one span (not one for the append inside it) with appended and duplicates', async () => {
    // given
    const session = await store.createSession()
    const m = [user('a'), user('b'), user('c')]
    await store.append(session, m.slice(0, 2))
    t.exporter.reset()
    // when
    await store.flush(session, m)
    // then
    const spans = t.spans()
    expect(spans.map((s) => s.name)).toEqual(['turnlog.flush'])
    expect(spans[0]?.attributes).toMatchObject({
      'gen_ai.conversation.id': session,
      'turnlog.messages.appended': 1,
      'turnlog.messages.duplicates': 2,
      'turnlog.session.version': 3,
    })
  })

  it('a failure: the span has error status and the error code as error.type, and counts as a conflict', async () => {
    // given
    const session = await store.createSession()
    await store.append(session, [user('a')])
    const before = sumOf(await t.metric('turnlog.operation.conflicts'))
    t.exporter.reset()
    // when
    const error = await store.append(session, [user('b')], { expectedVersion: 0 }).catch((e: unknown) => e)
    // then
    expect(isTurnlogError(error, 'VERSION_CONFLICT')).toBe(true)
    const [span] = t.spans()
    expect(span?.name).toBe('turnlog.append')
    expect(span?.status.code).toBe(SpanStatusCode.ERROR)
    expect(span?.attributes['error.type']).toBe('VERSION_CONFLICT')
    expect(span?.events.map((e) => e.name)).toEqual(['exception'])
    expect(sumOf(await t.metric('turnlog.operation.conflicts')) - before).toBe(1)
  })

  it('store calls made inside a store call add no spans: load({ at }), transcript, finalize with a payload', async () => {
    // given
    const session = await store.createSession()
    const m = createMessage({ role: 'assistant', content: 'par' }, { status: 'partial' })
    await store.append(session, [user('a'), m])
    t.exporter.reset()
    // when
    await store.load(session, { at: 1 })
    await store.transcript(session)
    await store.finalize(session, m.id, { role: 'assistant', content: 'partial, then final' })
    // then
    expect(t.spans().map((s) => s.name)).toEqual(['turnlog.load', 'turnlog.transcript', 'turnlog.finalize'])
  })

  it('events: one span over the iteration, with the number of events', async () => {
    // given
    const session = await store.createSession()
    await store.append(session, [user('a'), user('b'), user('c')])
    t.exporter.reset()
    // when
    const seen: number[] = []
    for await (const e of store.events(session)) seen.push(e.seq)
    // then
    const spans = t.spans()
    expect(spans.map((s) => s.name)).toEqual(['turnlog.events'])
    expect(spans[0]?.attributes).toMatchObject({ 'gen_ai.conversation.id': session, 'turnlog.events.count': seen.length })
  })

  it("the caller's active span is the parent of the store's span", async () => {
    // given
    const session = await store.createSession()
    const tracer = trace.getTracer('test')
    // when
    await tracer.startActiveSpan('request', async (request) => {
      await store.load(session)
      request.end()
    })
    // then
    const request = t.exporter.getFinishedSpans().find((s) => s.name === 'request')
    const load = t.spans().find((s) => s.name === 'turnlog.load')
    expect(load?.parentSpanContext?.spanId).toBe(request?.spanContext().spanId)
    expect(load?.spanContext().traceId).toBe(request?.spanContext().traceId)
  })

  if (flavor === 'Postgres') {
    it("every query the pg client sends runs with the store's span active", async () => {
      // given
      const session = await store.createSession()
      querySpans.length = 0
      // when
      await store.append(session, [user('a')], { expectedVersion: 0 })
      const first = (await store.load(session)).messages[0]
      if (first) await store.rewind(session, { from: first.id })
      // then
      const ids = new Set(t.spans().map((s) => s.spanContext().spanId))
      expect(querySpans.length).toBeGreaterThanOrEqual(3)
      for (const id of querySpans) expect(ids.has(id ?? '')).toBe(true)
    })

    it("instrumentation-pg: the driver's query spans are children of the store's span", async () => {
      // given: the instrumentation patches pg.Client by hand (its require hook never sees jest's module loader)
      const instrumentation = new PgInstrumentation({ enabled: false })
      const pgModule = instrumentation.getModuleDefinitions().find((d) => d.name === 'pg')
      pgModule?.patch?.(pg)
      try {
        const session = await store.createSession()
        t.exporter.reset()
        // when
        await store.load(session)
        await store.append(session, [user('a')])
        // then
        const spans = t.exporter.getFinishedSpans()
        const ours = t.spans()
        expect(ours.map((s) => s.name)).toEqual(['turnlog.load', 'turnlog.append'])
        const driver = spans.filter((s) => s.name.startsWith('pg.query'))
        expect(driver.length).toBeGreaterThanOrEqual(2)
        const parents = new Set(ours.map((s) => s.spanContext().spanId))
        for (const d of driver) expect(parents.has(d.parentSpanContext?.spanId ?? '')).toBe(true)
      } finally {
        pgModule?.unpatch?.(pg)
      }
    })

    it('group commit: concurrent appends to different sessions record the size of each statement', async () => {
      // given
      const sessions: SessionId[] = []
      for (let i = 0; i < 8; i++) sessions.push(await store.createSession())
      const before = histogramSum(await t.metric('turnlog.group_commit.size'))
      // when
      await Promise.all(sessions.map((s) => store.append(s, [user('x')])))
      // then: every append went out in some statement, and the spans are one per append
      expect(histogramSum(await t.metric('turnlog.group_commit.size')) - before).toBe(8)
      expect(t.spans().filter((s) => s.name === 'turnlog.append')).toHaveLength(8)
    })
  }

  it('metrics: operation duration per operation, messages appended and duplicates', async () => {
    // given
    const session = await store.createSession()
    const m = [user('a'), user('b')]
    const appendedBefore = sumOf(await t.metric('turnlog.messages.appended'))
    const duplicatesBefore = sumOf(await t.metric('turnlog.messages.duplicates'))
    // when
    await store.append(session, m)
    await store.append(session, m)
    await store.load(session)
    // then
    expect(sumOf(await t.metric('turnlog.messages.appended')) - appendedBefore).toBe(2)
    expect(sumOf(await t.metric('turnlog.messages.duplicates')) - duplicatesBefore).toBe(2)
    const duration = await t.metric('turnlog.operation.duration')
    expect(duration?.descriptor.unit).toBe('s')
    const operations = (duration?.dataPoints ?? []).map((p) => p.attributes['db.operation.name'])
    expect(operations).toEqual(expect.arrayContaining(['createSession', 'append', 'load']))
  })

  it('telemetry: false emits nothing while providers are registered', async () => {
    // given
    const quiet = await openStore({ kysely: store.db, migrate: false, telemetry: false })
    try {
      const before = sumOf(await t.metric('turnlog.messages.appended'))
      // when
      const session = await quiet.createSession()
      await quiet.append(session, [user('a')])
      await quiet.load(session)
      // then
      expect(t.spans()).toEqual([])
      expect(sumOf(await t.metric('turnlog.messages.appended'))).toBe(before)
    } finally {
      await quiet.close()
    }
  })
})

describe('without providers', () => {
  it('nothing is emitted; a provider registered later is used from the next call', async () => {
    // given: no tracer or meter provider registered
    const store = await openStore({ connectionString: db.connectionString })
    try {
      const session = await store.createSession()
      await store.append(session, [user('a')])
      await store.load(session)
      expect(trace.getActiveSpan()).toBeUndefined()
      // when
      const t = registerTelemetry()
      try {
        // then: nothing from before; the next call is traced
        expect(t.exporter.getFinishedSpans()).toEqual([])
        await store.load(session)
        expect(t.spans().map((s) => s.name)).toEqual(['turnlog.load'])
        const duration = await t.metric('turnlog.operation.duration')
        expect((duration?.dataPoints ?? []).map((p) => p.attributes['db.operation.name'])).toEqual(['load'])
      } finally {
        await t.shutdown()
      }
    } finally {
      await store.close()
    }
  })
})

/** The sum of a counter's data points (0 when it has none yet). */
function sumOf(metric: MetricData | undefined): number {
  return ((metric?.dataPoints ?? []) as DataPoint<number>[]).reduce((n, p) => n + p.value, 0)
}

/** The sum of a histogram's recorded values. */
function histogramSum(metric: MetricData | undefined): number {
  return ((metric?.dataPoints ?? []) as DataPoint<Histogram>[]).reduce((n, p) => n + (p.value.sum ?? 0), 0)
}
