import { parseInput } from '@turnlog/core/internal'
import { z } from 'zod'

const fnSchema = z.custom<(...args: never[]) => unknown>((v) => typeof v === 'function', { message: 'must be a function' })
const GroupCommitOptionsSchema = z.object({
  maxBatches: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  maxInFlight: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  runGroup: fnSchema,
  runAlone: fnSchema,
  rolledBack: fnSchema,
  weight: fnSchema.optional(),
  maxWeight: z.number().positive().optional(),
  onGroup: fnSchema.optional(),
  capture: fnSchema.optional(),
})

/**
 * Client-side group commit: appends to different sessions that wait at the same time are sent as one
 * statement (one transaction, one commit) instead of one each.
 *
 * Nothing waits on a timer. An append is queued and the queue is sent on the next microtask; while the
 * allowed number of groups is in flight, further appends gather in the queue and go out together as
 * soon as one returns. A lone writer therefore sees no added latency, and under load the group size
 * follows the concurrency. Per session, batches go out one at a time in arrival order (a session with
 * a batch in flight is skipped until it returns), so a store never races itself on a session's lock.
 *
 * Isolation: the group statement settles every batch it can and leaves out the others unwritten; each
 * left-out batch is then run alone (`runAlone`, one after another in the group's slot, so at most
 * `maxInFlight` statements are ever in flight), which reports its own error. When the whole group
 * statement fails with an error that proves nothing was committed (see {@link rolledBack}), every batch
 * is run alone; any other failure (a lost connection: the commit may or may not have happened) is
 * reported to every batch of the group, exactly as a single append reports it.
 */
export class GroupCommit<T extends { readonly sessionId: string }, R> {
  readonly #options: GroupCommitOptions<T, R>
  readonly #queue: Pending<T, R>[] = []
  readonly #busySessions = new Set<string>()
  #inFlight = 0
  #scheduled = false
  #idle: (() => void)[] = []

  constructor(options: GroupCommitOptions<T, R>) {
    this.#options = parseInput(GroupCommitOptionsSchema, options, 'options') as GroupCommitOptions<T, R>
  }

  /** Queues one session's batch; resolves with its result, or rejects with its own error. */
  submit(item: T): Promise<R> {
    const run = this.#options.capture?.()
    return new Promise<R>((resolve, reject) => {
      this.#queue.push(run === undefined ? { item, resolve, reject } : { item, resolve, reject, run })
      this.#schedule()
    })
  }

  /** Resolves once nothing is queued or in flight. */
  drain(): Promise<void> {
    if (this.#queue.length === 0 && this.#inFlight === 0) return Promise.resolve()
    return new Promise((resolve) => this.#idle.push(resolve))
  }

  #schedule(): void {
    if (this.#scheduled) return
    this.#scheduled = true
    queueMicrotask(() => {
      this.#scheduled = false
      this.#dispatch()
    })
  }

  #dispatch(): void {
    while (this.#inFlight < this.#options.maxInFlight) {
      const group = this.#take()
      if (group.length === 0) break
      this.#inFlight++
      for (const p of group) this.#busySessions.add(p.item.sessionId)
      // not awaited: groups run concurrently up to maxInFlight; #send settles every item of its group
      // (failures go to the items' promises), and the finally frees the slot for the next group. The
      // group goes out in the context its first batch was submitted in (a group sent when an earlier one
      // returns would otherwise run in the context of that earlier one's first batch)
      void inContext(group[0] as Pending<T, R>, () => this.#send(group)).finally(() => {
        this.#inFlight--
        for (const p of group) this.#busySessions.delete(p.item.sessionId)
        if (this.#queue.length > 0) this.#dispatch()
        if (this.#queue.length === 0 && this.#inFlight === 0) for (const resolve of this.#idle.splice(0)) resolve()
      })
    }
  }

  /**
   * The oldest waiting batch of each session that has none in flight, up to `maxBatches` and, with
   * `maxWeight`, up to that total weight (a batch that would pass it waits for a later group; the
   * first batch of a group is always taken).
   */
  #take(): Pending<T, R>[] {
    const group: Pending<T, R>[] = []
    const sessions = new Set<string>()
    const { weight, maxWeight = Number.POSITIVE_INFINITY } = this.#options
    let total = 0
    for (let i = 0; i < this.#queue.length && group.length < this.#options.maxBatches;) {
      const p = this.#queue[i] as Pending<T, R>
      const session = p.item.sessionId
      const w = weight === undefined ? 0 : weight(p.item)
      if (this.#busySessions.has(session) || sessions.has(session) || (group.length > 0 && total + w > maxWeight)) {
        sessions.add(session) // keeps this session's later batches behind this one
        i++
        continue
      }
      sessions.add(session)
      total += w
      group.push(p)
      this.#queue.splice(i, 1)
    }
    return group
  }

  async #send(group: readonly Pending<T, R>[]): Promise<void> {
    this.#options.onGroup?.(group.length)
    if (group.length === 1) {
      await this.#alone(group[0] as Pending<T, R>)
      return
    }
    let results: readonly (R | null)[]
    try {
      results = await this.#options.runGroup(group.map((p) => p.item))
    } catch (error) {
      if (!this.#options.rolledBack(error)) {
        for (const p of group) p.reject(error)
        return
      }
      // one after another: this group's slot is the only one they use (maxInFlight holds)
      for (const p of group) await this.#alone(p)
      return
    }
    const left: Pending<T, R>[] = []
    group.forEach((p, i) => {
      const r = results[i]
      if (r === null || r === undefined) left.push(p)
      else p.resolve(r)
    })
    for (const p of left) await this.#alone(p)
  }

  /** Sends one batch on its own, in its submitter's context (a batch a group left out too). */
  #alone(p: Pending<T, R>): Promise<void> {
    return inContext(p, async () => {
      try {
        p.resolve(await this.#options.runAlone(p.item))
      } catch (error) {
        p.reject(error)
      }
    })
  }
}

/** How a {@link GroupCommit} sends batches. */
export interface GroupCommitOptions<T, R> {
  /** Most batches (sessions) in one group statement. */
  readonly maxBatches: number
  /** Most group statements (or lone appends) in flight at once. */
  readonly maxInFlight: number
  /** The size of a batch, for {@link maxWeight} (e.g. the length of its texts). */
  readonly weight?: (item: T) => number
  /** Most total {@link weight} of one group statement (its texts travel as one string); default unbounded. */
  readonly maxWeight?: number
  /** Sends several batches in one statement; a `null` result leaves that batch to `runAlone`. */
  readonly runGroup: (items: readonly T[]) => Promise<readonly (R | null)[]>
  /** Sends one batch on its own; its error is that batch's error. */
  readonly runAlone: (item: T) => Promise<R>
  /** True when the group statement's error proves that nothing of it was committed. */
  readonly rolledBack: (error: unknown) => boolean
  /** Called with the number of batches of each statement (group or lone) as it is sent, e.g. for a metric. */
  readonly onGroup?: (batches: number) => void
  /**
   * Called in `submit`, in the caller's async context: a function that runs work in that context, or
   * undefined (nothing to keep). A group is sent in its first batch's context, a batch sent alone in
   * its own, so the statement's driver span is a child of a call whose batch it carries.
   */
  readonly capture?: () => ContextRunner | undefined
}

/** Runs `fn` in an async context captured earlier (e.g. `AsyncResource.runInAsyncScope`). */
export type ContextRunner = <V>(fn: () => V) => V

interface Pending<T, R> {
  readonly item: T
  readonly resolve: (value: R) => void
  readonly reject: (error: unknown) => void
  /** The submitter's context, when {@link GroupCommitOptions.capture} kept one. */
  readonly run?: ContextRunner
}

/** `fn()`, in `p`'s submitter's context when one was captured. */
function inContext<V>(p: { readonly run?: ContextRunner }, fn: () => V): V {
  return p.run === undefined ? fn() : p.run(fn)
}
