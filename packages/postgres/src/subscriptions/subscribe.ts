import { TurnlogError } from '@turnlog/core'
import { checkKnownKeys } from '@turnlog/core/internal'
import { optionKeys } from '../check-arguments.js'
import { checkSafeText, describeValue } from '../safe-text.js'
import { parseCheckpoint, type Checkpoint } from './checkpoint.js'
import { dedicatedConnectionFromConfig } from './dedicated-connection.js'
import { normalizeFilter, type SubscriptionFilter } from './read-committed-events.js'
import type { SubscriptionHost } from './open-consumer-session.js'
import { Subscription, type SubscriptionHandler, type SubscriptionSettings, type SubscriptionState } from './subscription.js'

/** What to consume: the durable name, where a new subscription starts, which events it wants. */
export interface SubscriptionConfig {
  /** The checkpoint's key; one consumer per name runs at a time, across processes. 1–200 characters. */
  readonly name: string
  /**
   * Where a subscription that has no checkpoint yet starts: `'start'` (default; the whole log), `'now'`
   * (events of transactions still running or not yet started, plus any committed ones an older open
   * transaction still holds back: the checkpoint is that transaction's horizon), or a checkpoint.
   * Ignored once the checkpoint exists: move it with `rebaseSubscription`.
   */
  readonly from?: 'start' | 'now' | Checkpoint
  /** Only these events reach the handler; the checkpoint still passes the others. */
  readonly filter?: SubscriptionFilter
}

/** Exponential back-off between a failed handler call and its retry. */
export interface BackoffOptions {
  /** Delay before the first retry, ms; default 200. */
  readonly initialDelayMs?: number
  /** Cap on one delay, ms; default 10,000. */
  readonly maxDelayMs?: number
  /** Growth per retry; default 2. */
  readonly factor?: number
}

/** Per-subscription options; every one has a default. */
export interface SubscribeOptions {
  /** Log rows read (and events handled) per poll, 1–10,000; default 100. The checkpoint commits per batch. */
  readonly batchSize?: number
  /** Handler calls per event before the subscription stops with `SUBSCRIPTION_FAILED`; default 5. */
  readonly maxAttempts?: number
  /** Delay before retry `attempt` (1, 2, …) of a failed event: options, or a function of the attempt. */
  readonly backoff?: BackoffOptions | ((attempt: number) => number)
  /**
   * Run each batch's handler calls and the checkpoint update in one transaction (on the consumer's
   * connection); the handler gets it as `context.transaction`. Projection writes then commit exactly
   * once. Keep handlers short: the transaction holds every subscriber back while it is open.
   */
  readonly transactional?: boolean
  /** Polling fallback, ms, when no notification arrives; default 1000. */
  readonly pollIntervalMs?: number
  /** Poll interval while committed events are held back by an open transaction, ms; default 100. */
  readonly heldBackPollIntervalMs?: number
  /** LISTEN for the commit notifications (Postgres); default true. False: polling only. */
  readonly listen?: boolean
  /** Wait (default) while another consumer holds the name, or fail at once with `SUBSCRIPTION_LOCKED`. */
  readonly waitForLock?: boolean
  /** How often a waiting consumer tries the lock, ms; default 1000. */
  readonly lockRetryMs?: number
  /** Reconnect (and re-take the name) after a transient connection failure; default true. */
  readonly reconnect?: boolean
  /** Cap on the reconnect delay, ms; default 5000. */
  readonly maxReconnectDelayMs?: number
  /**
   * The consumer's own connection (it holds the lock and the LISTEN). Default: the store's connection
   * settings (`openStore({ connectionString })`), or a client from its `{ pool }`. Required for a store
   * opened with `{ kysely }`.
   */
  readonly connectionString?: string
  /** Called once with the error that stopped the subscription. */
  readonly onError?: (error: TurnlogError) => void
  /** Called on every state change. */
  readonly onStateChange?: (state: SubscriptionState, subscription: Subscription) => void
}

/** The keys each argument of `subscribe` takes (any other is refused, naming it: a misspelt one would be ignored). */
const CONFIG_KEYS = optionKeys<SubscriptionConfig>({ name: true, from: true, filter: true })
const OPTION_KEYS = optionKeys<SubscribeOptions>({
  batchSize: true,
  maxAttempts: true,
  backoff: true,
  transactional: true,
  pollIntervalMs: true,
  heldBackPollIntervalMs: true,
  listen: true,
  waitForLock: true,
  lockRetryMs: true,
  reconnect: true,
  maxReconnectDelayMs: true,
  connectionString: true,
  onError: true,
  onStateChange: true,
})
const BACKOFF_KEYS = optionKeys<BackoffOptions>({ initialDelayMs: true, maxDelayMs: true, factor: true })

function positiveInt(value: unknown, what: string, fallback: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined) return fallback
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1 || value > max) {
    throw new TurnlogError('INVALID_INPUT', `${what} must be an integer from 1 to ${max}, got ${describeValue(value)}`, {
      details: { field: `options.${what}` },
    })
  }
  return value
}

/** A boolean option: absent (the default) or a boolean; `'false'` or `1` would silently pick a mode. */
function flag(value: unknown, what: string, fallback: boolean): boolean {
  if (value === undefined) return fallback
  if (typeof value !== 'boolean')
    throw new TurnlogError('INVALID_INPUT', `${what} must be a boolean, got ${describeValue(value)}`, {
      details: { field: `options.${what}` },
    })
  return value
}

/** A callback option: absent or a function (a non-function would be skipped without a word). */
function callback<T>(value: T | undefined, what: string): T | undefined {
  if (value !== undefined && typeof value !== 'function')
    throw new TurnlogError('INVALID_INPUT', `${what} must be a function, got ${describeValue(value)}`, {
      details: { field: `options.${what}` },
    })
  return value
}

function backoffFunction(backoff: SubscribeOptions['backoff']): (attempt: number) => number {
  if (typeof backoff === 'function') {
    return (attempt) => {
      // a delay that is not a number (a string, a bigint, a symbol, a throw) means no delay, like NaN; it
      // must not end the consumer, nor be coerced ('600000' is not ten minutes)
      try {
        const ms: unknown = backoff(attempt)
        return typeof ms === 'number' && ms > 0 ? ms : 0
      } catch {
        return 0
      }
    }
  }
  if (backoff !== undefined && (typeof backoff !== 'object' || backoff === null)) {
    throw new TurnlogError('INVALID_INPUT', 'backoff must be { initialDelayMs, maxDelayMs, factor } or a function', {
      details: { field: 'options.backoff' },
    })
  }
  if (backoff !== undefined) checkKnownKeys(backoff, BACKOFF_KEYS, 'options.backoff', 'subscribe')
  const initial = positiveInt(backoff?.initialDelayMs, 'backoff.initialDelayMs', 200)
  const max = positiveInt(backoff?.maxDelayMs, 'backoff.maxDelayMs', 10_000)
  const factor = backoff?.factor ?? 2
  if (typeof factor !== 'number' || !(factor >= 1))
    throw new TurnlogError('INVALID_INPUT', 'backoff.factor must be a number >= 1', { details: { field: 'options.backoff.factor' } })
  return (attempt) => Math.min(max, initial * factor ** Math.max(0, attempt - 1))
}

/**
 * Starts a consumer of the transaction-ordered log (see docs/subscriptions.md); `store.subscribe` calls
 * this. Validates everything before it starts and throws `INVALID_INPUT`; later failures end the
 * subscription (`done`, `onError`).
 */
export function subscribe(
  host: SubscriptionHost,
  config: SubscriptionConfig,
  handler: SubscriptionHandler,
  options: SubscribeOptions = {},
): Subscription {
  if (typeof config !== 'object' || config === null)
    throw new TurnlogError('INVALID_INPUT', 'subscribe needs { name }', { details: { field: 'config' } })
  checkKnownKeys(config, CONFIG_KEYS, 'config', 'subscribe')
  const name = checkSafeText(config.name, 'config.name')
  // characters are code points (as Postgres' char_length counts them), not UTF-16 units: an emoji is one
  const length = [...name].length
  if (length === 0 || length > 200)
    throw new TurnlogError('INVALID_INPUT', 'a subscription name has 1 to 200 characters', { details: { field: 'config.name' } })
  if (typeof handler !== 'function')
    throw new TurnlogError('INVALID_INPUT', 'subscribe needs a handler function', { details: { field: 'handler' } })
  // a default parameter does not replace null
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new TurnlogError('INVALID_INPUT', `subscribe options must be an object, got ${describeValue(options)}`, {
      details: { field: 'options' },
    })
  }
  checkKnownKeys(options, OPTION_KEYS, 'options', 'subscribe')
  const from = config.from ?? 'start'
  const settings: SubscriptionSettings = {
    name,
    from: from === 'start' || from === 'now' ? from : parseCheckpoint(from, 'config.from'),
    filter: normalizeFilter(config.filter),
    batchSize: positiveInt(options.batchSize, 'batchSize', 100, 10_000),
    maxAttempts: positiveInt(options.maxAttempts, 'maxAttempts', 5),
    backoff: backoffFunction(options.backoff),
    transactional: flag(options.transactional, 'transactional', false),
    pollIntervalMs: positiveInt(options.pollIntervalMs, 'pollIntervalMs', 1000),
    heldBackPollIntervalMs: positiveInt(options.heldBackPollIntervalMs, 'heldBackPollIntervalMs', 100),
    listen: flag(options.listen, 'listen', true),
    waitForLock: flag(options.waitForLock, 'waitForLock', true),
    lockRetryMs: positiveInt(options.lockRetryMs, 'lockRetryMs', 1000),
    reconnect: flag(options.reconnect, 'reconnect', true),
    reconnectDelay: (
      (cap) => (attempt: number) =>
        Math.min(cap, 250 * 2 ** Math.max(0, attempt - 1))
    )(positiveInt(options.maxReconnectDelayMs, 'maxReconnectDelayMs', 5000)),
    onError: callback(options.onError, 'onError'),
    onStateChange: callback(options.onStateChange, 'onStateChange'),
  }
  const dedicatedConnection =
    options.connectionString === undefined
      ? host.dedicatedConnection
      : dedicatedConnectionFromConfig({ connectionString: checkSafeText(options.connectionString, 'options.connectionString') })
  return new Subscription({ ...host, dedicatedConnection }, settings, handler)
}
