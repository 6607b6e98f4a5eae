/** The longest delay `setTimeout` honours (2^31 - 1 ms, about 24.8 days). */
const MAX_TIMER_MS = 2_147_483_647

interface Sleeper {
  readonly wakeOnNotify: boolean
  readonly done: () => void
}

/**
 * A consumer's waits (poll intervals, back-offs, lock retries, reconnect delays): a commit
 * notification ends the waits that listen for it, a stop ends every wait and every later one at once.
 * A notification that arrives while nobody listens is kept until the next poll clears it.
 */
export class Sleepers {
  readonly #sleepers = new Set<Sleeper>()
  #notified = false
  #stopped = false

  /** A poll starts: notifications before now are covered by it. */
  clearNotification(): void {
    this.#notified = false
  }

  /** Waits `ms` (at most about 24.8 days), or until a stop, or (with `wakeOnNotify`) until a notification. */
  sleep(ms: number, wakeOnNotify: boolean): Promise<void> {
    if (this.#stopped || (wakeOnNotify && this.#notified)) return Promise.resolve()
    return new Promise<void>((resolve) => {
      const sleeper: Sleeper = {
        wakeOnNotify,
        done: () => {
          clearTimeout(timer)
          this.#sleepers.delete(sleeper)
          resolve()
        },
      }
      // Node fires a longer timer at once (TimeoutOverflowWarning): a huge interval would make the consumer spin
      const timer = setTimeout(sleeper.done, Math.min(ms, MAX_TIMER_MS))
      this.#sleepers.add(sleeper)
    })
  }

  /** A notification (`stop` false) ends the waits that listen for one; a stop (`stop` true) ends them all, for good. */
  wake(stop: boolean): void {
    if (stop) this.#stopped = true
    else this.#notified = true
    for (const sleeper of [...this.#sleepers]) if (stop || sleeper.wakeOnNotify) sleeper.done()
  }
}
