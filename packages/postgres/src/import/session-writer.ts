import { TurnlogError, isTurnlogError } from '@turnlog/core'
import type { Kysely } from 'kysely'
import { mapDatabaseError, sqlState } from '../map-database-error.js'
import { retryableLostRace } from '../retryable-lost-race.js'
import type { PreparedSession, PreparedSessionHead } from './prepare-imported-session.js'
import { BATCH_EVENTS, BATCH_SIZE, writeSessions, type SessionOutcome } from './write-sessions.js'

/** A batch (one transaction) closes at this many events, payload characters or sessions, whichever comes first. */
const BATCH_SESSIONS = 200
/** Source records (a session and each of its events) taken between two turns of the event loop while a batch is being written. */
const YIELD_EVERY = 32

/**
 * Runs `fn` in a transaction (or the caller's). A write that lost a race for a key it found free (a
 * concurrent writer stored one of the source's new message ids, or created one of its sessions, after
 * `fn` read the store) wrote nothing and runs again, once or twice: it then finds what the other
 * writer stored and skips it, extends it or refuses it (`MESSAGE_CONFLICT`, `SESSION_EXISTS`). A
 * session id another tenant holds stays invisible and ends as `SESSION_EXISTS`.
 */
async function inTransaction<T>(db: Kysely<unknown>, fn: (db: Kysely<unknown>) => Promise<T>): Promise<T> {
  const lostIdRace = retryableLostRace()
  for (let attempt = 1; ; attempt++) {
    try {
      if (db.isTransaction) return await fn(db)
      return await db.transaction().execute(fn)
    } catch (error) {
      const mapped = mapDatabaseError(error)
      const lostRace = lostIdRace(error) || (sqlState(error) === '23505' && mapped.code === 'SESSION_EXISTS')
      if (lostRace && !db.isTransaction && attempt < 3) continue
      throw mapped
    }
  }
}

/**
 * A data exception (SQLSTATE class 22: a timestamp Postgres cannot hold, an id in event data that is
 * not a UUID, …) while writing one session is the source's fault, like every other malformed record.
 */
function sourceFault(error: unknown, session: PreparedSessionHead): unknown {
  const state = isTurnlogError(error, 'DB_ERROR') ? error.details['sqlState'] : undefined
  if (typeof state === 'string' && state.startsWith('22')) {
    return new TurnlogError(
      'IMPORT_FAILED',
      `line ${session.line}: session ${session.id}: the database refused the file's data: ${error instanceof Error ? error.message : ''}; nothing of the session was imported`,
      {
        details: { line: session.line, sessionId: session.id, sqlState: state },
        cause: error,
      },
    )
  }
  return error
}

/**
 * Writes an import's complete sessions in batches, one transaction each, one batch in flight while the
 * next is read. A batch that fails is written again one session per transaction, so the sessions
 * before the failing one are committed and the failing one raises its own error, exactly as when
 * every session is its own transaction; nothing after it is written.
 */
export class SessionWriter {
  readonly #db: Kysely<unknown>
  readonly #done: (s: PreparedSessionHead, outcome: SessionOutcome) => void
  /** In the caller's transaction a failed statement aborts it: one session per batch, so the error names it. */
  readonly #maxSessions: number
  #pending: PreparedSession[] = []
  #events = 0
  #size = 0
  #inflight: Promise<void> | null = null
  #failed = false
  #read = 0

  constructor(db: Kysely<unknown>, done: (s: PreparedSessionHead, outcome: SessionOutcome) => void) {
    this.#db = db
    this.#done = done
    this.#maxSessions = db.isTransaction ? 1 : BATCH_SESSIONS
  }

  /** Queues a complete session; starts writing the batch when it is full (after the previous one committed). */
  async add(s: PreparedSession): Promise<void> {
    if (this.#pending.length > 0 && (this.#events + s.events.length > BATCH_EVENTS || this.#size + s.size > BATCH_SIZE))
      await this.#dispatch()
    this.#pending.push(s)
    this.#events += s.events.length
    this.#size += s.size
    if (this.#pending.length >= this.#maxSessions || this.#events >= BATCH_EVENTS || this.#size >= BATCH_SIZE) await this.#dispatch()
  }

  /**
   * Called for every session taken from the source with its record count. Reading a source already in
   * memory runs on microtasks only, which would starve the socket of the batch being written until the
   * next batch is full: while a write is in flight, lets I/O callbacks run every few records (the
   * promise to await), else returns nothing.
   */
  pause(records: number): Promise<void> | undefined {
    if (this.#inflight === null) return undefined
    this.#read += records
    if (this.#read < YIELD_EVERY) return undefined
    this.#read = 0
    return new Promise((resolve) => setImmediate(resolve))
  }

  /** Writes every queued session and waits for every write; throws the first write's error. */
  async flush(): Promise<void> {
    await this.#dispatch()
    await this.#settle()
  }

  /**
   * After `error` stopped the reading: commits the complete sessions read before it (unless a write
   * failed: then nothing after the failing session is written), then throws the earliest error in
   * source order: a write's, else `error`.
   */
  async abort(error: unknown): Promise<never> {
    if (!this.#failed) await this.flush()
    else this.#pending = []
    throw error
  }

  async #settle(): Promise<void> {
    const inflight = this.#inflight
    this.#inflight = null
    if (inflight) await inflight
  }

  async #dispatch(): Promise<void> {
    const batch = this.#pending
    this.#pending = []
    this.#events = 0
    this.#size = 0
    await this.#settle()
    if (batch.length === 0) return
    const write = this.#write(batch)
    // observed by #settle; meanwhile the next batch is read
    write.catch(() => undefined)
    this.#inflight = write
  }

  async #write(batch: readonly PreparedSession[]): Promise<void> {
    try {
      let outcomes: SessionOutcome[]
      try {
        outcomes = await inTransaction(this.#db, (db) => writeSessions(db, batch))
      } catch (error) {
        if (batch.length === 1 || this.#db.isTransaction) throw sourceFault(error, (batch[0] as PreparedSession).session)
        // find the failing session: one transaction per session, in source order
        for (const one of batch) {
          let outcome: SessionOutcome | undefined
          try {
            outcome = (await inTransaction(this.#db, (db) => writeSessions(db, [one])))[0]
          } catch (e) {
            throw sourceFault(e, one.session)
          }
          if (outcome) this.#done(one.session, outcome)
        }
        return
      }
      batch.forEach((one, i) => this.#done(one.session, outcomes[i] as SessionOutcome))
    } catch (error) {
      this.#failed = true
      throw error
    }
  }
}
