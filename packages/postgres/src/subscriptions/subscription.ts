import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { checkFunction, checkKysely } from '../check-arguments.js'
import type { Kysely, Transaction } from 'kysely'
import { mapDatabaseError } from '../map-database-error.js'
import { describeValue } from '../safe-text.js'
import { CatchUpWaiters } from './catch-up-waiters.js'
import { checkpointFromRow, compareCheckpoints, type Checkpoint } from './checkpoint.js'
import { CheckpointRow } from './checkpoint-row.js'
import { openConsumerSession, type ConsumerSession, type SubscriptionHost } from './open-consumer-session.js'
import { probeUndelivered, readCommittedEvents, type NormalizedFilter, type SubscribedEvent } from './read-committed-events.js'
import { Sleepers } from './sleepers.js'
import { measureLag, type SubscriptionLag } from './subscription-lag.js'

/**
 * Where a subscription is:
 * - `starting`: connecting and loading its checkpoint;
 * - `waiting`: another consumer holds the name; retrying the lock every `lockRetryMs`;
 * - `running`: this consumer holds the name and delivers;
 * - `reconnecting`: its connection broke; it reconnects (and takes the lock again) after a delay;
 * - `stopped`: `stop()` (or the store's `close()`) ended it;
 * - `failed`: an error ended it (`error`, `done` rejects).
 */
export type SubscriptionState = 'starting' | 'waiting' | 'running' | 'reconnecting' | 'stopped' | 'failed'

/** What a handler gets with each event. */
export interface HandlerContext {
  /** The subscription's name. */
  readonly subscription: string
  /**
   * How many times this `Subscription` has handed this event to the handler, this call included: 1 the
   * first time, 2.. for a retry after a call threw (transactional: also for the events before it in the
   * rolled-back batch), or for a re-delivery after a lost connection (transactional: the batch rolled
   * back; direct: before its checkpoint committed). Another consumer (a
   * new process after a crash, a takeover) starts at 1 again: it cannot know of the earlier calls.
   */
  readonly attempt: number
  /**
   * With `transactional: true`: the transaction the checkpoint commits in. Write the projection
   * through it (e.g. `store.withTransaction(context.transaction)` or Kysely) and the projection and the
   * checkpoint commit together, exactly once. Undefined otherwise.
   */
  readonly transaction: Transaction<unknown> | undefined
}

/**
 * The consumer's code: called for each event, in order; throw to have the event retried (alone, with
 * `attempt` 2..; with `transactional: true` the events before it in its rolled-back batch are handed over
 * again first). An event is handed over again only then, or after a crash or a lost connection.
 */
export type SubscriptionHandler = (event: SubscribedEvent, context: HandlerContext) => void | Promise<void>

/** A subscription's validated settings, as made by `subscribe`. */
export interface SubscriptionSettings {
  readonly name: string
  readonly from: 'start' | 'now' | Checkpoint
  readonly filter: NormalizedFilter
  readonly batchSize: number
  readonly maxAttempts: number
  readonly backoff: (attempt: number) => number
  readonly transactional: boolean
  readonly pollIntervalMs: number
  readonly heldBackPollIntervalMs: number
  readonly listen: boolean
  readonly waitForLock: boolean
  readonly lockRetryMs: number
  readonly reconnect: boolean
  readonly reconnectDelay: (attempt: number) => number
  readonly onError: ((error: TurnlogError) => void) | undefined
  readonly onStateChange: ((state: SubscriptionState, subscription: Subscription) => void) | undefined
}

interface ChunkResult {
  /** Events handled and checkpointed. */
  readonly done: number
  /** The event whose handler call threw (its index in the page), and what it threw. */
  readonly failure?: { readonly index: number; readonly error: unknown }
}

/** Rolls a transactional chunk back when a handler call throws (the chunk's writes go with it). */
class HandlerFailure {
  constructor(
    readonly index: number,
    readonly cause: unknown,
  ) {}
}

function keyOf(event: SubscribedEvent): Checkpoint {
  return checkpointFromRow(event.txId, event.globalPosition)
}

/**
 * Where a chunk that delivered `events[..next)` leaves the checkpoint: the key of the last delivered
 * event, or `last` (the batch's end key) when the chunk reached `end` and it is the batch's last chunk.
 */
function chunkEnd(events: readonly SubscribedEvent[], next: number, end: number, last: Checkpoint | null): Checkpoint {
  return next === end && last !== null ? last : keyOf(events[next - 1] as SubscribedEvent)
}

/**
 * A running consumer of the transaction-ordered log; made by `store.subscribe`. It delivers every
 * event after its durable checkpoint to the handler, in `(txId, globalPosition)` order, at least once,
 * and moves the checkpoint (compare-and-set) only after the handler succeeded. One consumer per name
 * runs at a time across processes; the others wait and take over when it dies.
 */
export class Subscription {
  /** The subscription's name (its checkpoint's key). */
  readonly name: string
  /**
   * Settles when the subscription ends: resolves after `stop()`, rejects with the error that stopped
   * it (`SUBSCRIPTION_FAILED`, `SUBSCRIPTION_LOCKED`, `SUBSCRIPTION_CONFLICT`, a database error).
   */
  readonly done: Promise<void>

  readonly #host: SubscriptionHost
  readonly #settings: SubscriptionSettings
  readonly #handler: SubscriptionHandler
  #state: SubscriptionState = 'starting'
  #checkpoint: Checkpoint | null = null
  #delivered = 0
  #error: TurnlogError | null = null
  #stopping = false
  /** When the listening lease was last renewed (ms since epoch); 0 when not listening. */
  #leaseRenewedAt = 0
  #polls = 0
  #heldBack = false
  /**
   * Handler calls per event this consumer made and whose checkpoint has not committed yet (`attempt`),
   * keyed `txId:globalPosition`, in log order (events are handed over in log order).
   */
  readonly #calls = new Map<string, { readonly key: Checkpoint; calls: number }>()
  readonly #row: CheckpointRow
  readonly #sleepers = new Sleepers()
  readonly #catchUps = new CatchUpWaiters()

  /** Use `store.subscribe`; this starts consuming at once. */
  constructor(host: SubscriptionHost, settings: SubscriptionSettings, handler: SubscriptionHandler) {
    // made by subscribe() from checked parts; still refuse garbage with INVALID_INPUT, never a TypeError
    checkKysely(
      guardInput('host', () => (typeof host === 'object' && host !== null ? host.db : undefined)),
      'host.db',
    )
    const name = guardInput('settings', () => (typeof settings === 'object' && settings !== null ? settings.name : undefined))
    if (typeof name !== 'string')
      throw new TurnlogError('INVALID_INPUT', 'settings.name must be a string (use store.subscribe)', {
        details: { field: 'settings.name' },
      })
    checkFunction(handler, 'handler')
    this.name = name
    this.#row = new CheckpointRow(name)
    this.#host = host
    this.#settings = settings
    this.#handler = handler
    this.done = this.#run()
    // the caller may never look at `done`: a failure is not an unhandled rejection (onError, catchUp and
    // `error` report it); awaiting `done` still rejects
    this.done.catch(() => {})
  }

  /** Where the subscription is (see {@link SubscriptionState}). */
  get state(): SubscriptionState {
    return this.#state
  }

  /** The last checkpoint this consumer read or committed; null until it holds the name. */
  get checkpoint(): Checkpoint | null {
    return this.#checkpoint
  }

  /** Events this consumer's handler processed and whose checkpoint committed. */
  get delivered(): number {
    return this.#delivered
  }

  /** The error that stopped the subscription, if one did. */
  get error(): TurnlogError | null {
    return this.#error
  }

  /** True when the last poll found nothing to deliver but committed events held back by an open transaction. */
  get heldBack(): boolean {
    return this.#heldBack
  }

  /**
   * Stops consuming: the current handler call finishes and its checkpoint commits, retries waiting
   * for their back-off are abandoned (the checkpoint stays before that event), the connection (and so
   * the name) is released. Resolves when stopped; never rejects.
   */
  async stop(): Promise<void> {
    this.#stopping = true
    this.#sleepers.wake(true)
    await this.done.catch(() => {})
  }

  /**
   * Resolves once every event committed before the call has been delivered and checkpointed, with the
   * checkpoint then. Events held back by an older open transaction are waited for (as long as it stays
   * open), and so is the name while another consumer holds it. Rejects if the subscription fails (its
   * error) or stops first (`SUBSCRIPTION_STOPPED`).
   */
  catchUp(): Promise<Checkpoint> {
    if (this.#error !== null) return Promise.reject(this.#error)
    if (this.#state === 'stopped') return Promise.reject(this.#stoppedError('catchUp'))
    return this.#catchUps.add(this.#host.db, this.#polls, () => this.#settleCatchUps(false))
  }

  /** Measures how far behind the subscription is (see {@link SubscriptionLag}). */
  async lag(): Promise<SubscriptionLag> {
    try {
      return await measureLag(this.#host.db, this.#checkpoint ?? (await this.#row.read(this.#host.db)))
    } catch (error) {
      throw mapDatabaseError(error)
    }
  }

  // --- the consumer loop -------------------------------------------------------------------------

  async #run(): Promise<void> {
    let reconnects = 0
    try {
      while (!this.#stopping) {
        let session: ConsumerSession | null = null
        try {
          this.#setState(reconnects === 0 ? 'starting' : 'reconnecting')
          session = await openConsumerSession(this.#host, {
            name: this.name,
            listen: this.#settings.listen,
            onBroken: () => this.#sleepers.wake(false),
          })
          if (!(await this.#acquire(session))) break
          await session.listen(() => this.#sleepers.wake(false))
          const checkpoint = await this.#row.load(session.db, this.#settings.from)
          // after a reconnect: calls counted since the checkpoint this consumer knew still count; if someone
          // else moved it meanwhile (a takeover, a rebase), start counting afresh
          if (this.#checkpoint === null || compareCheckpoints(checkpoint, this.#checkpoint) !== 0) this.#calls.clear()
          this.#checkpoint = checkpoint
          this.#setState('running')
          reconnects = 0
          await this.#consume(session)
        } catch (error) {
          const e = mapDatabaseError(error)
          if (!this.#settings.reconnect || e.code !== 'DB_TRANSIENT' || this.#stopping) throw e
          // the connection broke (and with it the lock): reconnect, wait for the lock, re-read the checkpoint
          reconnects++
          this.#setState('reconnecting')
          await session?.close()
          session = null
          await this.#sleepers.sleep(this.#settings.reconnectDelay(reconnects), false)
        } finally {
          await session?.close()
        }
      }
      this.#finish(null)
    } catch (error) {
      const e = mapDatabaseError(error)
      this.#finish(e)
      throw e
    }
  }

  /** Takes the name; false when stopped while waiting. */
  async #acquire(session: ConsumerSession): Promise<boolean> {
    for (;;) {
      if (this.#stopping) return false
      if (await session.tryLock()) return true
      if (!this.#settings.waitForLock) {
        throw new TurnlogError('SUBSCRIPTION_LOCKED', `subscription "${this.name}" is consumed elsewhere`, { details: { name: this.name } })
      }
      this.#setState('waiting')
      await this.#sleepers.sleep(this.#settings.lockRetryMs, false)
    }
  }

  async #consume(session: ConsumerSession): Promise<void> {
    const { batchSize, filter, heldBackPollIntervalMs, pollIntervalMs } = this.#settings
    while (!this.#stopping) {
      this.#sleepers.clearNotification()
      this.#polls++
      const poll = this.#polls
      const page = await readCommittedEvents(session.db, this.#current(), { limit: batchSize, filter })
      if (page.scanned > 0 && page.last !== null) {
        this.#heldBack = false
        await this.#deliver(session, page.events, page.last)
        this.#settleCatchUps(false)
        continue
      }
      // Nothing visible. Committed events may still exist past the checkpoint: held back by an older
      // open transaction (anywhere in the cluster), which may end without a notification (a rollback,
      // a write to another table or database): look again soon. Or the holder ended, or a commit
      // landed, since the page's snapshot (its notification may already have been consumed): read now.
      // renew before the probe: a commit after the renewal notifies, one before it is seen by the probe
      await this.#renewLease(session)
      const probe = await probeUndelivered(session.db, this.#current())
      this.#heldBack = probe.heldBack && !probe.visible
      if (probe.visible) continue
      // nothing committed is left past the checkpoint: every catch-up called before this poll is done
      if (!probe.heldBack) this.#settleCatchUps(true, poll)
      await this.#sleepers.sleep(probe.heldBack ? heldBackPollIntervalMs : pollIntervalMs, true)
    }
  }

  /**
   * Writers notify only while some consumer holds a live listening lease (see migration 0002), so an
   * idle consumer that relies on notifications renews it before it sleeps: the lease lasts three poll
   * intervals (at least 10 s) and is renewed once a third of it has passed.
   */
  async #renewLease(session: ConsumerSession): Promise<void> {
    if (!this.#settings.listen || this.#host.flavor === 'pglite') return
    const leaseMs = Math.max(10_000, 3 * this.#settings.pollIntervalMs)
    if (Date.now() - this.#leaseRenewedAt < leaseMs / 3) return
    await this.#row.renewLease(session.db, leaseMs)
    this.#leaseRenewedAt = Date.now()
  }

  #current(): Checkpoint {
    if (this.#checkpoint === null) throw new Error('turnlog: subscription checkpoint not loaded')
    return this.#checkpoint
  }

  /**
   * Hands a page's matching events to the handler in order, with retries; commits the checkpoint after
   * each run of successes (up to `last`, the page's last scanned row, once all succeeded).
   */
  async #deliver(session: ConsumerSession, events: readonly SubscribedEvent[], last: Checkpoint): Promise<void> {
    if (events.length === 0) {
      // the filter skipped the whole page: move past it
      await this.#commit(session.db, last, 0)
      return
    }
    const { maxAttempts } = this.#settings
    let pos = 0
    // the event whose calls failed, and how many times in a row
    let failedAt = -1
    let failures = 0
    while (pos < events.length) {
      if (this.#stopping) return
      if (failedAt === pos) {
        await this.#sleepers.sleep(this.#settings.backoff(failures), false)
        if (this.#stopping) return
      }
      // after a failure at a later event (transactional: rolled back), first the events before it, then
      // the failed one alone
      const end = failedAt > pos ? failedAt : failedAt === pos ? pos + 1 : events.length
      const result = await this.#chunk(session, events, pos, end, end === events.length ? last : null)
      pos += result.done
      if (result.failure !== undefined) {
        if (result.failure.index !== failedAt) {
          failedAt = result.failure.index
          failures = 0
        }
        failures++
        if (failures >= maxAttempts) await this.#fail(session, events, failedAt, failures, result.failure.error)
      } else if (pos > failedAt) {
        failedAt = -1
        failures = 0
      }
    }
  }

  /**
   * Hands `events[pos..end)` to the handler one by one, in `transaction` if given, until one throws or
   * the subscription stops (after at least one). Returns the index it stopped before, and the handler's
   * error if that is why.
   */
  async #handOver(
    events: readonly SubscribedEvent[],
    pos: number,
    end: number,
    transaction: Transaction<unknown> | undefined,
  ): Promise<{ next: number; failure: { error: unknown } | null }> {
    let i = pos
    for (; i < end; i++) {
      if (this.#stopping && i > pos) break
      const event = events[i] as SubscribedEvent
      try {
        const context = { subscription: this.name, attempt: this.#countCall(event), transaction }
        if (this.#host.inside === undefined) await this.#handler(event, context)
        else await this.#host.inside(async () => this.#handler(event, context), transaction !== undefined)
      } catch (error) {
        return { next: i, failure: { error } }
      }
    }
    return { next: i, failure: null }
  }

  /**
   * Delivers `events[pos..end)` and moves the checkpoint past the events handled. Direct: past every
   * event handled before a failure or a stop. Transactional: the handlers' writes and the checkpoint
   * commit in one transaction, and a failure rolls the whole chunk back (the events before the failed
   * one are then handed over again: their writes went with it).
   */
  async #chunk(
    session: ConsumerSession,
    events: readonly SubscribedEvent[],
    pos: number,
    end: number,
    last: Checkpoint | null,
  ): Promise<ChunkResult> {
    if (!this.#settings.transactional) {
      const { next, failure } = await this.#handOver(events, pos, end, undefined)
      const done = next - pos
      if (done > 0) await this.#commit(session.db, chunkEnd(events, next, end, last), done)
      return failure === null ? { done } : { done, failure: { index: next, error: failure.error } }
    }
    let outcome: { done: number; to: Checkpoint }
    try {
      outcome = await session.db.transaction().execute(async (trx) => {
        const { next, failure } = await this.#handOver(events, pos, end, trx)
        if (failure !== null) throw new HandlerFailure(next, failure.error)
        const to = chunkEnd(events, next, end, last)
        await this.#row.move(trx, this.#current(), to, next - pos)
        return { done: next - pos, to }
      })
    } catch (error) {
      if (error instanceof HandlerFailure) return { done: 0, failure: { index: error.index, error: error.cause } }
      throw error
    }
    this.#committed(outcome.to, outcome.done)
    return { done: outcome.done }
  }

  /** Counts a handler call for `event`; returns its `attempt`. */
  #countCall(event: SubscribedEvent): number {
    const id = `${event.txId}:${event.globalPosition}`
    const entry = this.#calls.get(id)
    if (entry !== undefined) return ++entry.calls
    this.#calls.set(id, { key: keyOf(event), calls: 1 })
    return 1
  }

  async #commit(db: Kysely<unknown>, to: Checkpoint, delivered: number): Promise<void> {
    await this.#row.move(db, this.#current(), to, delivered)
    this.#committed(to, delivered)
  }

  /** The checkpoint committed at `to`: the calls of the events up to it no longer need counting. */
  #committed(to: Checkpoint, delivered: number): void {
    this.#checkpoint = to
    this.#delivered += delivered
    for (const [id, entry] of this.#calls) {
      if (compareCheckpoints(entry.key, to) > 0) break
      this.#calls.delete(id)
    }
  }

  /** Records the failure on the checkpoint row (best effort) and throws `SUBSCRIPTION_FAILED`. */
  async #fail(
    session: ConsumerSession,
    events: readonly SubscribedEvent[],
    index: number,
    attempts: number,
    cause: unknown,
  ): Promise<never> {
    const event = events[index] as SubscribedEvent
    const failedEvent = {
      txId: event.txId,
      globalPosition: event.globalPosition,
      sessionId: event.sessionId,
      seq: event.seq,
      eventId: event.eventId,
      type: event.type,
    }
    // a handler may throw anything: String() of a null-prototype object would throw a TypeError here
    const reason = cause instanceof Error ? cause.message : typeof cause === 'string' ? cause : describeValue(cause)
    const error = new TurnlogError(
      'SUBSCRIPTION_FAILED',
      `subscription "${this.name}": the handler failed ${attempts} times on ${event.type} ${event.sessionId}#${event.seq} ` +
        `(tx ${event.txId}, position ${event.globalPosition}): ${reason}; stopped with the checkpoint before it`,
      { details: { name: this.name, attempts, failedEvent, checkpoint: this.#checkpoint }, cause },
    )
    await this.#row.recordError(session.db, error)
    throw error
  }

  // --- plumbing --------------------------------------------------------------------------------------

  #setState(state: SubscriptionState): void {
    if (this.#state === state) return
    this.#state = state
    try {
      this.#settings.onStateChange?.(state, this)
    } catch {
      // a listener's bug must not stop the consumer
    }
  }

  #finish(error: TurnlogError | null): void {
    this.#error = error
    this.#setState(error === null ? 'stopped' : 'failed')
    const reason = error ?? this.#stoppedError('catchUp')
    this.#catchUps.rejectAll(reason)
    if (error !== null) {
      try {
        this.#settings.onError?.(error)
      } catch {
        // ignore
      }
    }
  }

  #stoppedError(what: string): TurnlogError {
    return new TurnlogError('SUBSCRIPTION_STOPPED', `subscription "${this.name}" was stopped before ${what} finished`, {
      details: { name: this.name, checkpoint: this.#checkpoint },
    })
  }

  /** Resolves catch-ups whose target is reached, or that a later poll proved (nothing committed left). */
  #settleCatchUps(emptyPoll: boolean, poll = 0): void {
    const checkpoint = this.#checkpoint
    if (checkpoint === null || this.#state !== 'running') return
    this.#catchUps.settle(checkpoint, emptyPoll, poll)
  }
}
