import { sql, type Kysely } from 'kysely'
import { START_CHECKPOINT, checkpointFromRow, compareCheckpoints, type Checkpoint } from './checkpoint.js'

interface CatchUpWaiter {
  /** Polls started before the call; a later poll that finds nothing proves the catch-up. */
  readonly afterPoll: number
  target: Checkpoint | null
  readonly resolve: (checkpoint: Checkpoint) => void
  readonly reject: (error: unknown) => void
}

/**
 * The pending `Subscription.catchUp()` calls. Each resolves when the consumer's checkpoint reaches the
 * last event committed when it was called, or when a poll started after the call found nothing left to
 * deliver (either proves every event committed before the call was delivered).
 */
export class CatchUpWaiters {
  readonly #waiters = new Set<CatchUpWaiter>()

  /**
   * A new waiter (`afterPoll`: the polls started so far); reads its target, the last committed event,
   * through `db`, then calls `settle` (a failed read leaves the poll-based proof).
   */
  add(db: Kysely<unknown>, afterPoll: number, settle: () => void): Promise<Checkpoint> {
    return new Promise<Checkpoint>((resolve, reject) => {
      const waiter: CatchUpWaiter = { afterPoll, target: null, resolve, reject }
      this.#waiters.add(waiter)
      // the last committed event now: reaching it proves the catch-up even under constant writes
      void sql<{ tx_id: string; global_position: string | number }>`
        select e.tx_id::text as tx_id, e.global_position from turnlog.events e
         order by e.tx_id desc, e.global_position desc limit 1`
        .execute(db)
        .then(({ rows }) => {
          const row = rows[0]
          waiter.target = row === undefined ? START_CHECKPOINT : checkpointFromRow(row.tx_id, row.global_position)
          settle()
        })
        .catch(() => {}) // the poll-based proof still works
    })
  }

  /** Resolves the waiters whose target `checkpoint` reached, or that poll `poll` proved (`emptyPoll`: it found nothing). */
  settle(checkpoint: Checkpoint, emptyPoll: boolean, poll: number): void {
    for (const waiter of this.#waiters) {
      const reached = waiter.target !== null && compareCheckpoints(checkpoint, waiter.target) >= 0
      if (reached || (emptyPoll && poll > waiter.afterPoll)) {
        this.#waiters.delete(waiter)
        waiter.resolve(checkpoint)
      }
    }
  }

  /** Rejects every waiter with `reason` (the subscription ended). */
  rejectAll(reason: unknown): void {
    for (const waiter of this.#waiters) waiter.reject(reason)
    this.#waiters.clear()
  }
}
