/**
 * Server-side connection loss under load: while 8 writers append and flush, every backend of the
 * test database is terminated again and again with `pg_terminate_backend` (what an operator, a
 * failover or an OOM kill does). Writers see `DB_TRANSIENT`, retry with `withRetry`, and finish; an
 * independent ledger of what each writer meant to store finds nothing lost and nothing doubled.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type TurnlogError } from '@turnlog/core'
import { openStore, withRetry, type PostgresStore } from '@turnlog/postgres'
import { Ledger, type TestDatabase, useTestStore } from '@turnlog/testing'
import { BackendKiller, auditProblems, seededRandom, sleep } from './support/fault-helpers.js'

const WRITERS = 8
const SESSIONS = 4
const BATCHES = 60

let db: TestDatabase
let direct: PostgresStore

useTestStore((t) => ({ db, store: direct } = t))

/** The raw error behind a DB_TRANSIENT, as "SQLSTATE message" or "message". */
function describeCause(error: TurnlogError): string {
  const cause = error.cause as { code?: unknown; message?: unknown } | undefined
  const code = typeof cause?.code === 'string' ? `${cause.code} ` : ''
  return `${code}${String(cause?.message)}`.replace(/[0-9a-f]{8}-[0-9a-f-]{27}/g, '<uuid>')
}

describe('pg_terminate_backend while 8 writers run', () => {
  it('every writer finishes through DB_TRANSIENT retries; 0 lost, 0 duplicated, order kept per writer', async () => {
    // given
    const ledger = new Ledger()
    const sessions = await Promise.all(Array.from({ length: SESSIONS }, () => direct.createSession()))
    sessions.forEach((s) => ledger.created(s))
    const killer = await BackendKiller.connect(db.name)
    const causes = new Map<string, number>()
    let retries = 0
    let ambiguous = 0
    let completed = 0
    let done = false

    const writer = async (w: number): Promise<number> => {
      const random = seededRandom(1000 + w)
      const session = sessions[w % SESSIONS] as string
      const store = await withRetry(() => openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 2 } }), {
        attempts: 20,
      })
      const live: Message[] = []
      let written = 0
      const retry = {
        attempts: 100,
        baseDelayMs: 5,
        maxDelayMs: 200,
        onRetry: (error: unknown) => {
          retries++
          const key = describeCause(error as TurnlogError)
          causes.set(key, (causes.get(key) ?? 0) + 1)
        },
      }
      try {
        for (let b = 0; b < BATCHES; b++) {
          const batch = Array.from({ length: random.int(1, 4) }, (_, i) =>
            createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `w${w} b${b} m${i} ${'x'.repeat(random.int(0, 2000))}` }),
          )
          live.push(...batch)
          // when
          const result =
            b % 2 === 0
              ? await withRetry(() => store.append(session, batch), retry)
              : await withRetry(() => store.flush(session, live), retry)
          // a batch id reported as a duplicate was written by an attempt whose acknowledgement was lost
          if (batch.some((m) => result.duplicates.includes(m.id))) ambiguous++
          ledger.appended(session, batch, `writer-${w}`)
          written += batch.length
          completed++
        }
      } finally {
        await store.close()
      }
      return written
    }

    // the next kill waits for 40-150 ms and for half the writers' worth of finished calls: on a
    // loaded machine a fixed kill interval shorter than one connect-and-append would kill every
    // attempt of some writer (a livelock the test made, not one the store has)
    const terminator = (async () => {
      const random = seededRandom(7)
      while (!done) {
        await killer.all()
        const mark = completed
        await sleep(random.int(40, 150))
        while (!done && completed < mark + WRITERS / 2) await sleep(5)
      }
    })()

    const started = performance.now()
    let written: number[]
    try {
      written = await Promise.all(Array.from({ length: WRITERS }, (_, w) => writer(w)))
    } finally {
      done = true
      await terminator
      await killer.close()
    }
    const seconds = (performance.now() - started) / 1000

    // then
    const report = await ledger.verify(direct)
    const drift = await direct.rebuild({ verify: true })
    console.log(
      [
        `terminate-backends: ${WRITERS} writers, ${SESSIONS} sessions, ${written.reduce((a, b) => a + b, 0)} messages in ${seconds.toFixed(1)} s`,
        `  backends terminated: ${killer.terminated}, DB_TRANSIENT retries: ${retries}, retries that found their batch already committed: ${ambiguous}`,
        `  lost: ${report.lost}, duplicated: ${report.duplicated}, phantom: ${report.phantom}, out of order: ${report.outOfOrder}, live mismatches: ${report.liveMismatches}`,
        `  raw causes: ${[...causes].map(([k, n]) => `${n}× ${k}`).join('; ')}`,
      ].join('\n'),
    )
    expect(report.problems).toEqual([])
    expect(report).toMatchObject({ lost: 0, duplicated: 0, phantom: 0, outOfOrder: 0, liveMismatches: 0, brokenChains: 0 })
    expect(report.messages).toBe(written.reduce((a, b) => a + b, 0))
    expect(drift.drift).toEqual([])
    expect((await auditProblems(direct)).problems).toEqual([])
    // the faults really happened, and really reached the writers
    expect(killer.terminated).toBeGreaterThanOrEqual(20)
    expect(retries).toBeGreaterThanOrEqual(10)
  }, 120_000)
})
