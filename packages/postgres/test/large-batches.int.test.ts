/**
 * A valid batch of any size is written whole. Incident (issue 13, item 9): a batch of 16,000 new
 * messages failed with `DB_ERROR 53200 out of shared memory`: the append took one advisory lock per new
 * id, and the lock table (max_locks_per_transaction × connections) ran out. Since 0008 nothing the append
 * takes grows with the batch (the claim on `turnlog.message_ids` is a row of a table).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, openTestStore, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'

function batch(n: number, tag: string): Message[] {
  return Array.from({ length: n }, (_, i) => createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${tag} ${i}` }))
}

async function storedCount(
  store: PostgresStore,
  session: string,
): Promise<{ events: number; live: number; claimed: number; version: number }> {
  const { rows } = await sql<{ events: string; live: string; claimed: string }>`
    select (select count(*) from turnlog.events where session_id = ${session}) as events,
           (select count(*) from turnlog.live_messages where session_id = ${session}) as live,
           (select count(*) from turnlog.message_ids where session_id = ${session}) as claimed`.execute(store.db)
  const row = rows[0]
  return {
    events: Number(row?.events),
    live: Number(row?.live),
    claimed: Number(row?.claimed),
    version: (await store.getSession(session)).version,
  }
}

describe('large batches (Postgres)', () => {
  let db: TestDatabase
  let alone: PostgresStore
  let grouped: PostgresStore

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true })
    alone = await openStore({ connectionString: db.connectionString, pool: { max: 2 }, groupCommit: false })
    grouped = await openStore({ connectionString: db.connectionString, pool: { max: 2 }, migrate: false })
  })

  afterAll(async () => {
    await alone.close()
    await grouped.close()
    await db.drop()
  })

  it.each([16_000, 50_000])('append of %i new messages is written whole (append_messages), and again is all duplicates', async (n) => {
    // given
    const session = await alone.createSession()
    const messages = batch(n, `alone ${n}`)

    // when
    const result = await alone.append(session, messages)

    // then
    expect(result.appended).toHaveLength(n)
    expect(await storedCount(alone, session)).toEqual({ events: n, live: n, claimed: n, version: n })
    const again = await alone.append(session, messages)
    expect(again).toEqual({ version: n, appended: [], duplicates: messages.map((m) => m.id) })
  })

  it("append of 16,000 new messages through the group commit (append_batches), beside other sessions' batches", async () => {
    // given
    const session = await grouped.createSession()
    const others = await Promise.all([1, 2, 3].map(() => grouped.createSession()))
    const messages = batch(16_000, 'grouped')

    // when: the big batch and small ones at once, so they may share a statement
    const [result] = await Promise.all([grouped.append(session, messages), ...others.map((o) => grouped.append(o, batch(3, o)))])

    // then
    expect(result.appended).toHaveLength(16_000)
    expect(await storedCount(grouped, session)).toEqual({ events: 16_000, live: 16_000, claimed: 16_000, version: 16_000 })
    for (const o of others) expect((await storedCount(grouped, o)).events).toBe(3)
  })

  it('flush of a live list of 16,000 new messages (the first flush of a resumed import, say) writes them all', async () => {
    // given: a fresh store (nothing cached) and a live list with scaffolding in it
    const session = await grouped.createSession()
    const live = [...batch(16_000, 'flush'), createMessage({ role: 'user', content: 'continue' }, { ephemeral: true })]

    // when
    const result = await grouped.flush(session, live)

    // then
    expect(result.appended).toHaveLength(16_000)
    expect(await storedCount(grouped, session)).toEqual({ events: 16_000, live: 16_000, claimed: 16_000, version: 16_000 })
    expect((await grouped.load(session)).messages.map((m) => m.id)).toEqual(live.slice(0, 16_000).map((m) => m.id))
  })
})

describe('large batches (PGlite)', () => {
  it('append and flush of 8,000 new messages each are written whole', async () => {
    // given
    const { store, close: closeStore } = await openTestStore('pglite')
    try {
      const a = await store.createSession()
      const b = await store.createSession()

      // when
      const appended = await store.append(a, batch(8_000, 'pglite append'))
      const flushed = await store.flush(b, batch(8_000, 'pglite flush'))

      // then
      expect(appended.appended).toHaveLength(8_000)
      expect(flushed.appended).toHaveLength(8_000)
      expect(await storedCount(store, a)).toEqual({ events: 8_000, live: 8_000, claimed: 8_000, version: 8_000 })
      expect(await storedCount(store, b)).toEqual({ events: 8_000, live: 8_000, claimed: 8_000, version: 8_000 })
    } finally {
      await closeStore()
    }
  })
})
