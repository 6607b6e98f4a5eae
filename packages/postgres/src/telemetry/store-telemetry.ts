import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks'
import type { Context, Counter, Histogram, Meter, Span, Tracer } from '@opentelemetry/api'
import { isTurnlogError } from '@turnlog/core'
import { loadOpenTelemetry, loadedOpenTelemetry, type OpenTelemetryApi } from './load-open-telemetry.js'
import type { TelemetryConfig } from './telemetry-config.js'

/** Span and metric attributes: OpenTelemetry primitives. */
export type TelemetryAttributes = Readonly<Record<string, string | number | boolean>>

/** The instrumentation scope of the store's tracer and meter. */
export const TELEMETRY_SCOPE = '@turnlog/postgres'

/**
 * The store whose call is running, while one runs with telemetry on: a call of the same store made
 * inside it (by the call itself, or by a callback or source it runs: `rebuild`'s `onProgress`,
 * `importSessions`' sessions) is part of the outer call and adds no span or measurement of its own. A
 * call of another store there (an import reading an export of another store) has its own span, a
 * child of the running one.
 */
const inside = new AsyncLocalStorage<StoreTelemetry>()

/** The OpenTelemetry API and what of it listens to a call: a tracer, instruments, or both. */
interface Listeners {
  readonly api: OpenTelemetryApi
  readonly tracer: Tracer | null
  readonly instruments: Instruments | null
}

/** One store call as telemetry names it: the operation, the span's name, the session it is on. */
interface Operation {
  readonly operation: string
  readonly name: string
  readonly sessionId: unknown
}

/** The store's metric instruments, created once per meter. */
interface Instruments {
  readonly duration: Histogram
  readonly appended: Counter
  readonly duplicates: Counter
  readonly conflicts: Counter
  readonly groupSize: Histogram
}

/** The error codes counted by `turnlog.conflicts`. */
const CONFLICT_CODES: ReadonlySet<string> = new Set(['VERSION_CONFLICT', 'MESSAGE_CONFLICT'])

const byOwner = new WeakMap<object, StoreTelemetry>()

/**
 * A store's OpenTelemetry spans and metrics (docs/operations.md, "Tracing and metrics"). Every call
 * first asks whether anything listens: without `@opentelemetry/api`, with `telemetry: false`, or with
 * no tracer and no meter provider registered, the operation runs directly (a few comparisons, no
 * allocation). Otherwise it runs inside a span named `turnlog.<operation>` made active for it (the
 * driver's spans, `@opentelemetry/instrumentation-pg`, nest inside), and its duration is recorded.
 */
export class StoreTelemetry {
  readonly #config: TelemetryConfig | false
  #api: OpenTelemetryApi | null | undefined
  /** The global tracer provider the cached tracer came from (its delegate, behind the api's proxy). */
  #tracerProvider: unknown = undefined
  #tracer: Tracer | null = null
  #meterSource: unknown = undefined
  #instruments: Instruments | null = null

  /** `config`: see {@link TelemetryConfig}; `false` turns telemetry off. */
  constructor(config: TelemetryConfig | false | undefined) {
    this.#config = config ?? {}
    this.#api = this.#config === false ? null : loadedOpenTelemetry()
    // constructed before openStore loaded it (a PostgresStore built directly): calls made until the
    // import settles are not traced
    if (this.#api === undefined) void loadOpenTelemetry()
  }

  /** Binds `telemetry` to `owner`, for {@link StoreTelemetry.of}. */
  static attach(owner: object, telemetry: StoreTelemetry): void {
    byOwner.set(owner, telemetry)
  }

  /** The telemetry {@link StoreTelemetry.attach} bound to `owner`, if any. */
  static of(owner: object): StoreTelemetry | undefined {
    return byOwner.get(owner)
  }

  /**
   * Runs one store operation: directly when nothing listens or when it is called from inside another
   * call of this store; otherwise in span `name` with `gen_ai.conversation.id` = `sessionId` (when a string),
   * the attributes `attributes` derives from the result, or the error's code as `error.type`.
   */
  span<T>(
    operation: string,
    name: string,
    sessionId: unknown,
    fn: () => Promise<T>,
    attributes?: (result: T) => TelemetryAttributes,
  ): Promise<T> {
    const on = this.#listeners()
    return on === null ? fn() : this.#traced(on, { operation, name, sessionId }, fn, attributes)
  }

  /**
   * As {@link span} for an iteration (`events`): `source` itself when nothing listens or when called
   * from inside another call of this store, otherwise an iteration of it in a span that covers it from the
   * first `next()` to its end (or the consumer's `break`) and counts the items as `turnlog.events.count`.
   */
  iterate<T>(operation: string, name: string, sessionId: unknown, source: AsyncGenerator<T>): AsyncGenerator<T> {
    const on = this.#listeners()
    return on === null ? source : this.#tracedIteration(on, { operation, name, sessionId }, source)
  }

  /** What listens now; null when nothing does, or when called from inside another call of this store. */
  #listeners(): Listeners | null {
    const api = this.#api === undefined ? (this.#api = loadedOpenTelemetry()) : this.#api
    if (api === null || api === undefined) return null
    const tracer = this.#currentTracer(api)
    const instruments = this.#currentInstruments(api)
    if ((tracer === null && instruments === null) || inside.getStore() === this) return null
    return { api, tracer, instruments }
  }

  async *#tracedIteration<T>(on: Listeners, op: Operation, source: AsyncGenerator<T>): AsyncGenerator<T> {
    const { api } = on
    const started = performance.now()
    const { span, context } = this.#start(on, op)
    let count = 0
    let failure: unknown = undefined
    try {
      for (;;) {
        const step = await api.context.with(context, () => inside.run(this, () => source.next()))
        if (step.done === true) break
        count++
        yield step.value
      }
    } catch (error) {
      failure = error
      throw error
    } finally {
      // a consumer's break ends the source (its finally blocks run) before the span ends
      await source.return(undefined).catch(() => {})
      this.#finish(on, op.operation, span, started, { 'turnlog.events.count': count }, failure)
    }
  }

  /**
   * The current async context, kept for work that runs later from elsewhere (a group-commit statement
   * sent when an earlier group returns): a function running work in it, or undefined when no tracer
   * listens (then nothing is kept: no cost).
   */
  captureContext(): (<V>(fn: () => V) => V) | undefined {
    const api = this.#api
    if (api === null || api === undefined || this.#currentTracer(api) === null) return undefined
    const resource = new AsyncResource('turnlog.groupCommit')
    return (fn) => resource.runInAsyncScope(fn)
  }

  /** Records the size of one group-commit statement (`turnlog.group_commit.size`). */
  groupSize(batches: number): void {
    const api = this.#api
    if (api === null || api === undefined) return
    this.#currentInstruments(api)?.groupSize.record(batches)
  }

  async #traced<T>(
    on: Listeners,
    op: Operation,
    fn: () => Promise<T>,
    attributes: ((result: T) => TelemetryAttributes) | undefined,
  ): Promise<T> {
    const started = on.instruments === null ? 0 : performance.now()
    const { span, context } = this.#start(on, op)
    let extra: TelemetryAttributes | undefined
    let failure: unknown = undefined
    try {
      const result = await on.api.context.with(context, () => inside.run(this, fn))
      extra = attributes?.(result)
      return result
    } catch (error) {
      failure = error
      throw error
    } finally {
      this.#finish(on, op.operation, span, started, extra, failure)
    }
  }

  #start({ api, tracer }: Listeners, { operation, name, sessionId }: Operation): { span: Span | null; context: Context } {
    const active = api.context.active()
    if (tracer === null) return { span: null, context: active }
    const span = tracer.startSpan(
      name,
      {
        kind: api.SpanKind.INTERNAL,
        attributes: {
          'db.system.name': 'postgresql',
          'db.operation.name': operation,
          ...(typeof sessionId === 'string' ? { 'gen_ai.conversation.id': sessionId.slice(0, 64) } : {}),
        },
      },
      active,
    )
    return { span, context: api.trace.setSpan(active, span) }
  }

  #finish(
    { api, instruments }: Listeners,
    operation: string,
    span: Span | null,
    started: number,
    extra: TelemetryAttributes | undefined,
    failure: unknown,
  ): void {
    const errorType = failure === undefined ? undefined : errorTypeOf(failure)
    if (span !== null) {
      if (extra !== undefined) span.setAttributes(extra)
      if (errorType !== undefined) {
        span.setAttribute('error.type', errorType)
        span.setStatus({ code: api.SpanStatusCode.ERROR, message: failure instanceof Error ? failure.message : String(failure) })
        if (failure instanceof Error) span.recordException(failure)
      }
      span.end()
    }
    if (instruments === null) return
    const attributes =
      errorType === undefined ? { 'db.operation.name': operation } : { 'db.operation.name': operation, 'error.type': errorType }
    instruments.duration.record((performance.now() - started) / 1000, attributes)
    const appended = extra?.['turnlog.messages.appended']
    if (typeof appended === 'number' && appended > 0) instruments.appended.add(appended, { 'db.operation.name': operation })
    const duplicates = extra?.['turnlog.messages.duplicates']
    if (typeof duplicates === 'number' && duplicates > 0) instruments.duplicates.add(duplicates, { 'db.operation.name': operation })
    if (errorType !== undefined && CONFLICT_CODES.has(errorType)) instruments.conflicts.add(1, attributes)
  }

  /** The tracer to use now, or null when no tracer provider is registered (checked on every call). */
  #currentTracer(api: OpenTelemetryApi): Tracer | null {
    const config = this.#config
    if (config !== false && config.tracer !== undefined) return config.tracer as Tracer
    const global = api.trace.getTracerProvider()
    const provider = global instanceof api.ProxyTracerProvider ? global.getDelegate() : global
    if (provider === this.#tracerProvider) return this.#tracer
    this.#tracerProvider = provider
    this.#tracer = provider === noopTracerProvider(api) ? null : provider.getTracer(TELEMETRY_SCOPE)
    return this.#tracer
  }

  /** The instruments to record with now, or null when no meter provider is registered. */
  #currentInstruments(api: OpenTelemetryApi): Instruments | null {
    const config = this.#config
    const explicit = config !== false ? config.meter : undefined
    const source: unknown = explicit ?? api.metrics.getMeterProvider()
    if (source === this.#meterSource) return this.#instruments
    this.#meterSource = source
    const meter = explicit === undefined ? api.metrics.getMeterProvider().getMeter(TELEMETRY_SCOPE) : (explicit as Meter)
    this.#instruments = meter === api.createNoopMeter() ? null : createInstruments(meter)
    return this.#instruments
  }
}

/** The api's no-op tracer provider: what its global proxy delegates to while none is registered. */
let noop: { api: OpenTelemetryApi; provider: unknown } | undefined
function noopTracerProvider(api: OpenTelemetryApi): unknown {
  if (noop?.api !== api) noop = { api, provider: new api.ProxyTracerProvider().getDelegate() }
  return noop.provider
}

function createInstruments(meter: Meter): Instruments {
  return {
    duration: meter.createHistogram('turnlog.operation.duration', {
      description: 'Duration of turnlog store operations',
      unit: 's',
      advice: { explicitBucketBoundaries: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] },
    }),
    appended: meter.createCounter('turnlog.messages.appended', { description: 'Messages written by append and flush', unit: '{message}' }),
    duplicates: meter.createCounter('turnlog.messages.duplicates', {
      description: 'Messages append and flush found already stored',
      unit: '{message}',
    }),
    conflicts: meter.createCounter('turnlog.operation.conflicts', {
      description: 'Operations refused with VERSION_CONFLICT or MESSAGE_CONFLICT',
      unit: '{conflict}',
    }),
    groupSize: meter.createHistogram('turnlog.group_commit.size', {
      description: 'Appends (sessions) sent in one group-commit statement',
      unit: '{batch}',
      advice: { explicitBucketBoundaries: [1, 2, 4, 8, 16, 32, 64] },
    }),
  }
}

/** `error.type`: a turnlog error's code, otherwise `_OTHER` (the semantic conventions' fallback). */
function errorTypeOf(error: unknown): string {
  return isTurnlogError(error) ? error.code : '_OTHER'
}
