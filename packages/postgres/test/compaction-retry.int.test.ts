import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'

let db: TestDatabase
const opened: PostgresStore[] = []

beforeAll(async () => {
  db = await createTestDatabase()
})

afterAll(async () => {
  for (const s of opened) await s.close()
  await db.drop()
})

/** A store on its own pool (its own backend, so no cached insert target page). */
async function freshStore(): Promise<PostgresStore> {
  const store = await openStore({ connectionString: db.connectionString, pool: { max: 1 } })
  opened.push(store)
  return store
}

class Rollback extends Error {}

describe('compaction retry when the heap returns a later revision first (Postgres)', () => {
  it("a retried compaction is a no-op even when the summary's revision row sits before its original row in the heap", async () => {
    // given: dead tuples early in the heap (a rolled-back batch), then a compaction at the end of the heap
    const store = await freshStore()
    const sid = await store.createSession()
    const a = createMessage({ role: 'user', content: 'a' })
    await store.append(sid, [a])
    await expect(
      store.db.transaction().execute(async (trx) => {
        const junk = Array.from({ length: 400 }, (_, i) => createMessage({ role: 'user', content: `junk ${i} ${'x'.repeat(200)}` }))
        await store.withTransaction(trx).append(sid, junk)
        throw new Rollback()
      }),
    ).rejects.toBeInstanceOf(Rollback)
    const summary = createMessage({ role: 'user', content: '[CONTEXT COMPACTION] a' })
    await store.compact(sid, { covered: [a.id], summary })
    // the dead space becomes reusable; a new backend's next insert (the revision) lands in it
    await sql`vacuum turnlog.events`.execute(store.db)
    const reviser = await freshStore()
    await reviser.revise(sid, summary.id, { role: 'user', content: '[CONTEXT COMPACTION] a, corrected' })
    const { rows } = await sql<{ type: string }>`
      select type from turnlog.events where message_id = ${summary.id} and content_hash is not null order by ctid`.execute(store.db)

    // when: the caller whose acknowledgement was lost retries the compaction
    const retry = await (await freshStore()).compact(sid, { covered: [a.id], summary })

    // then
    expect(rows.map((r) => r.type)).toEqual(['message_revised', 'message_appended']) // the setup worked
    expect(retry).toEqual({ version: 4, summary: [summary.id] })
  })
})
