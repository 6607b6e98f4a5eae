import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, newMessageId, type Message, type SessionId, type StoredEvent } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'

const WRITERS = 8

let db: TestDatabase
let stores: PostgresStore[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  // one store per writer, each with its own pool: separate "processes" racing on one session
  stores = []
  for (let i = 0; i < WRITERS; i++) stores.push(await openStore({ connectionString: db.connectionString, pool: { max: 2 } }))
})

afterAll(async () => {
  for (const s of stores) await s.close()
  await db.drop()
})

function store(i: number): PostgresStore {
  const s = stores[i]
  if (!s) throw new Error(`no store ${i}`)
  return s
}

async function eventsOf(sid: SessionId): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store(0).events(sid)) out.push(e)
  return out
}

/** Deterministic batch sizes 1..4 so a failure reproduces. */
function batchesFor(writer: number, count: number): Message[][] {
  return Array.from({ length: count }, (_, b) =>
    Array.from({ length: 1 + ((writer * 7 + b * 3) % 4) }, (_, k) =>
      createMessage({ role: k % 2 === 0 ? 'user' : 'assistant', content: `w${writer} b${b} m${k}` }),
    ),
  )
}

/** Asserts the log holds every batch exactly once, each batch contiguous and in order, seqs gapless. */
async function expectEveryBatchOnceAndContiguous(sid: SessionId, batches: readonly (readonly Message[])[]): Promise<void> {
  const events = await eventsOf(sid)
  const total = batches.reduce((n, b) => n + b.length, 0)
  expect(events.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1))
  const seqOf = new Map<string, number>()
  for (const e of events) {
    expect(e.messageId).not.toBeNull()
    expect(seqOf.has(e.messageId as string)).toBe(false)
    seqOf.set(e.messageId as string, e.seq)
  }
  for (const batch of batches) {
    const seqs = batch.map((m) => seqOf.get(m.id))
    const first = seqs[0] ?? -1
    expect(seqs).toEqual(batch.map((_, i) => first + i))
  }
  expect((await store(0).getSession(sid)).version).toBe(total)
  expect((await store(0).load(sid)).messages.map((m) => m.id)).toEqual(events.map((e) => e.messageId))
  expect((await store(0).rebuild({ sessionId: sid, verify: true })).drift).toEqual([])
}

describe('concurrent writers on one session (Postgres)', () => {
  it('8 writers without expectedVersion: seqs gapless 1..N, every batch once and contiguous, results agree with the log', async () => {
    // given
    const sid = await store(0).createSession()
    const perWriter = Array.from({ length: WRITERS }, (_, w) => batchesFor(w, 25))

    // when: all writers append all their batches at once
    const results = await Promise.all(
      perWriter.map(async (batches, w) => {
        const out: { batch: Message[]; version: number; appended: readonly string[] }[] = []
        for (const batch of batches) {
          const r = await store(w).append(sid, batch)
          out.push({ batch, version: r.version, appended: r.appended })
        }
        return out
      }),
    )

    // then
    await expectEveryBatchOnceAndContiguous(sid, perWriter.flat())
    const events = await eventsOf(sid)
    const seqOf = new Map(events.map((e) => [e.messageId as string, e.seq]))
    for (const r of results.flat()) {
      expect(r.appended).toEqual(r.batch.map((m) => m.id))
      // the reported version is the seq of the batch's last message
      expect(r.version).toBe(seqOf.get(r.batch[r.batch.length - 1]?.id ?? ''))
    }
  })

  it('8 writers with the same expectedVersion: exactly one wins each round, the others get VERSION_CONFLICT; nothing lost or duplicated', async () => {
    // given
    const sid = await store(0).createSession()
    const pending = Array.from({ length: WRITERS }, (_, w) => batchesFor(w, 3))
    const all = pending.flat()
    let rounds = 0
    let conflicts = 0

    // when: every round, all writers read the version, then all append expecting it
    while (pending.some((q) => q.length > 0)) {
      rounds++
      const active = pending.map((q, w) => ({ w, batch: q[0] })).filter((x): x is { w: number; batch: Message[] } => x.batch !== undefined)
      const seen = await Promise.all(active.map(({ w }) => store(w).getSession(sid)))
      const expected = seen[0]?.version ?? -1
      expect(seen.every((s) => s.version === expected)).toBe(true)
      const outcomes = await Promise.all(
        active.map(async ({ w, batch }) => {
          try {
            const r = await store(w).append(sid, batch, { expectedVersion: expected })
            return { w, batch, ok: true as const, version: r.version }
          } catch (error) {
            if (!isTurnlogError(error, 'VERSION_CONFLICT')) throw error
            return { w, batch, ok: false as const, actual: error.details['actualVersion'] }
          }
        }),
      )

      // then (per round)
      const winners = outcomes.filter((o) => o.ok)
      expect(winners).toHaveLength(1)
      const winner = winners[0]
      if (!winner?.ok) throw new Error('no winner')
      expect(winner.version).toBe(expected + winner.batch.length)
      for (const o of outcomes) if (!o.ok) expect(o.actual).toBe(winner.version)
      conflicts += outcomes.length - 1
      pending[winner.w]?.shift()
    }

    // then (overall)
    // one batch lands per round
    expect(rounds).toBe(all.length)
    expect(conflicts).toBeGreaterThan(0)
    await expectEveryBatchOnceAndContiguous(sid, all)
  })

  it('8 writers retrying on VERSION_CONFLICT (read, append expecting it, repeat): every batch lands once', async () => {
    // given
    const sid = await store(0).createSession()
    const perWriter = Array.from({ length: WRITERS }, (_, w) => batchesFor(w, 6))

    // when
    await Promise.all(
      perWriter.map(async (batches, w) => {
        for (const batch of batches) {
          for (let attempt = 0; ; attempt++) {
            if (attempt > 500) throw new Error('writer starved')
            const { version } = await store(w).getSession(sid)
            try {
              await store(w).append(sid, batch, { expectedVersion: version })
              break
            } catch (error) {
              if (!isTurnlogError(error, 'VERSION_CONFLICT')) throw error
            }
          }
        }
      }),
    )

    // then
    await expectEveryBatchOnceAndContiguous(sid, perWriter.flat())
  })
})

describe('one message id raced into several sessions (Postgres)', () => {
  it('at most one session gets it; the others get MESSAGE_CONFLICT (foreign_session)', async () => {
    // given
    const sessions: SessionId[] = []
    for (let i = 0; i < WRITERS; i++) sessions.push(await store(i).createSession())
    const violations: string[] = []

    for (let round = 0; round < 20; round++) {
      const id = newMessageId()
      const message = createMessage({ role: 'user', content: `round ${round}` }, { id })

      // when: every writer appends the same message to its own session at once
      const outcomes = await Promise.all(
        sessions.map(async (sid, w) => {
          try {
            await store(w).append(sid, [message])
            return 'ok'
          } catch (error) {
            return isTurnlogError(error) ? error.code : String(error)
          }
        }),
      )

      // then
      const ok = outcomes.filter((o) => o === 'ok').length
      if (ok !== 1 || outcomes.some((o) => o !== 'ok' && o !== 'MESSAGE_CONFLICT')) violations.push(`round ${round}: ${outcomes.join(',')}`)
    }
    expect(violations).toEqual([])
  })
})
