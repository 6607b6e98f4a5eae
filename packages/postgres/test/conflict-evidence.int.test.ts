/**
 * docs/guarantees.md, Idempotency and conflicts: a refused batch is recorded in `turnlog.conflicts`,
 * one row per conflicting message (not only the first one the error names), written together by one
 * statement, outside any caller transaction. Messages of the batch that do not conflict (new ones,
 * duplicates) get no row. Runs on Postgres (alone, in a group commit, inside a rolled-back caller
 * transaction) and on PGlite.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import {
  contentHash,
  createMessage,
  isTurnlogError,
  type ConflictRecord,
  type Message,
  type SessionId,
  type TurnlogError,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, openTestStore, type TestDatabase } from '@turnlog/testing'
import fc from 'fast-check'
import { sql } from 'kysely'

let db: TestDatabase
const stores: { postgres?: PostgresStore; pglite?: PostgresStore } = {}
let closePglite: (() => Promise<void>) | undefined

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  stores.postgres = await openStore({ connectionString: db.connectionString, migrate: false })
  ;({ store: stores.pglite, close: closePglite } = await openTestStore('pglite'))
}, 60_000)

afterAll(async () => {
  await stores.postgres?.close()
  await closePglite?.()
  await db?.drop()
})

const user = (content: string, id?: string): Message => createMessage({ role: 'user', content }, id === undefined ? {} : { id })

async function refusal(p: Promise<unknown>): Promise<TurnlogError> {
  const error = await p.then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!isTurnlogError(error, 'MESSAGE_CONFLICT')) throw new Error(`expected MESSAGE_CONFLICT, got ${String(error)}`)
  return error
}

async function eventCount(store: PostgresStore, session: SessionId): Promise<number> {
  const { rows } = await sql<{ n: string | number }>`select count(*) as n from turnlog.events where session_id = ${session}`.execute(
    store.db,
  )
  return Number(rows[0]?.n)
}

type Kind = 'content_mismatch' | 'foreign_session'

/**
 * A session with `stored` messages, another session owning `foreign`, and a batch that conflicts with
 * them as `kinds` says, between new messages and a duplicate.
 */
async function conflictingBatch(
  store: PostgresStore,
  kinds: readonly Kind[],
): Promise<{
  session: SessionId
  owner: SessionId
  batch: Message[]
  conflicting: { message: Message; kind: Kind; storedHash: string }[]
}> {
  const session = await store.createSession()
  const owner = await store.createSession()
  const originals = kinds.map((k, i) => user(`original ${i} (${k})`))
  const own = originals.filter((_, i) => kinds[i] === 'content_mismatch')
  const foreign = originals.filter((_, i) => kinds[i] === 'foreign_session')
  const duplicate = user('already stored, same content')
  await store.append(session, [duplicate, ...own])
  if (foreign.length > 0) await store.append(owner, foreign)
  const conflicting = originals.map((o, i) => ({
    message: kinds[i] === 'content_mismatch' ? user(`changed ${i}`, o.id) : o,
    kind: kinds[i]!,
    storedHash: contentHash(o),
  }))
  const batch = [user('new before'), ...conflicting.flatMap((c, i) => (i === 1 ? [duplicate, c.message] : [c.message])), user('new after')]
  return { session, owner, batch, conflicting }
}

function expectEvidence(
  records: readonly ConflictRecord[],
  session: SessionId,
  owner: SessionId,
  conflicting: { message: Message; kind: Kind; storedHash: string }[],
): void {
  expect(records.map((r) => r.messageId)).toEqual(conflicting.map((c) => c.message.id))
  records.forEach((r, i) => {
    const c = conflicting[i]!
    expect(r).toEqual({
      sessionId: session,
      messageId: c.message.id,
      reason: c.kind,
      storedHash: c.storedHash,
      incomingHash: contentHash(c.message),
      otherSessionId: c.kind === 'foreign_session' ? owner : null,
      incomingPayload: c.message.payload,
      detectedAt: expect.any(String),
    })
  })
  // one attempt, one statement: the rows share their timestamp
  expect(new Set(records.map((r) => r.detectedAt)).size).toBe(1)
}

const KIND_SETS: readonly (readonly Kind[])[] = [
  ['content_mismatch', 'content_mismatch'],
  ['foreign_session', 'foreign_session'],
  ['content_mismatch', 'foreign_session', 'content_mismatch', 'foreign_session', 'content_mismatch'],
]

describe.each(['postgres', 'pglite'] as const)('conflict evidence (%s)', (flavor) => {
  it.each(KIND_SETS.map((k) => [k.join(', '), k] as const))(
    'a batch with conflicts %s records one row per conflicting message, nothing else',
    async (_, kinds) => {
      // given
      const store = stores[flavor]!
      const { session, owner, batch, conflicting } = await conflictingBatch(store, kinds)
      const before = await eventCount(store, session)

      // when
      const error = await refusal(store.append(session, batch))

      // then: the error lists every conflict (and names the first), the evidence has a row for each
      expect((error.details as { conflicts: { messageId: string }[] }).conflicts.map((c) => c.messageId)).toEqual(
        conflicting.map((c) => c.message.id),
      )
      expect(error.details).toMatchObject({ messageId: conflicting[0]!.message.id, reason: kinds[0] })
      expectEvidence(await store.conflicts(session), session, owner, conflicting)
      expect(await store.conflicts(owner)).toEqual([])
      expect(await eventCount(store, session)).toBe(before)
    },
  )

  it('through flush too, and a second attempt adds its own rows', async () => {
    // given
    const store = stores[flavor]!
    const { session, owner, batch, conflicting } = await conflictingBatch(store, ['foreign_session', 'content_mismatch'])

    // when: the same refused list flushed twice
    await refusal(store.flush(session, batch))
    await new Promise((resolve) => setTimeout(resolve, 5))
    await refusal(store.flush(session, batch))

    // then
    const records = await store.conflicts(session)
    expect(records).toHaveLength(4)
    expectEvidence(records.slice(0, 2), session, owner, conflicting)
    expectEvidence(records.slice(2), session, owner, conflicting)
  })

  it('property: any mix of new, duplicate and conflicting messages records exactly the conflicting ones', async () => {
    const store = stores[flavor]!
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<Kind>('content_mismatch', 'foreign_session'), { minLength: 1, maxLength: 6 }),
        async (kinds) => {
          const { session, owner, batch, conflicting } = await conflictingBatch(store, kinds)
          await refusal(store.append(session, batch))
          expectEvidence(await store.conflicts(session), session, owner, conflicting)
        },
      ),
      { numRuns: 10 },
    )
  })
})

describe('conflict evidence (postgres paths)', () => {
  it('a conflicting batch in a group commit: its evidence is complete, the other batches are written', async () => {
    // given
    const store = stores.postgres!
    const { session, owner, batch, conflicting } = await conflictingBatch(store, [
      'content_mismatch',
      'foreign_session',
      'content_mismatch',
    ])
    const others = await Promise.all(Array.from({ length: 4 }, () => store.createSession()))

    // when: appends made in the same tick go out as one group statement
    const results = await Promise.allSettled([...others.map((s) => store.append(s, [user('fine')])), store.append(session, batch)])

    // then
    expect(results.slice(0, 4).map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled', 'fulfilled'])
    const last = results[4]!
    expect(last.status === 'rejected' && isTurnlogError(last.reason, 'MESSAGE_CONFLICT')).toBe(true)
    expectEvidence(await store.conflicts(session), session, owner, conflicting)
  })

  it("inside a caller's transaction that rolls back: the evidence stays", async () => {
    // given
    const store = stores.postgres!
    const { session, owner, batch, conflicting } = await conflictingBatch(store, ['foreign_session', 'content_mismatch'])

    // when
    await store.db
      .transaction()
      .execute(async (trx) => {
        await refusal(store.withTransaction(trx).append(session, batch))
      })
      .catch(() => {})

    // then
    expectEvidence(await store.conflicts(session), session, owner, conflicting)
  })
})
