import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'
import { historyArb, newStats, runHistory } from './support/projection-harness.js'

// `rebuild()` recomputes projections in batches with turnlog.rebuild_sessions (0004): a set-based path
// for logs of plain appends (and forks), a replay through project_event for the rest. Whatever the
// history, the rows it leaves must be exactly the rows the triggers wrote, positions included (later
// compactions and appends build on positions), whether the projection was intact or damaged.
const NUM_RUNS = Number(process.env['TURNLOG_PROP_RUNS'] ?? 60)

let db: TestDatabase
let store: PostgresStore
const stats = newStats()

beforeAll(async () => {
  db = await createTestDatabase()
  store = await openStore({ connectionString: db.connectionString, pool: { max: 4 } })
})

afterAll(async () => {
  await store.close()
  await db.drop()
})

interface Row {
  session_id: string
  message_id: string
  position: string
  event_seq: string
  partial: boolean
}

async function projection(): Promise<Row[]> {
  const { rows } = await sql<Row>`
    select session_id::text, message_id::text, position::text, event_seq::text, partial
      from turnlog.live_messages order by session_id, message_id`.execute(store.db)
  return rows
}

describe('batch rebuild (Postgres)', () => {
  it('random histories: rebuild() leaves exactly the rows the triggers wrote, from an intact or a damaged projection', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(historyArb, { minLength: 1, maxLength: 4 }), fc.nat(), async (histories, damage) => {
        // given: histories written through the store (the triggers' projection), then damage to some sessions
        await Promise.all(histories.map((h) => runHistory([store], h, stats)))
        const inline = await projection()
        const intact = await store.rebuild()
        expect(intact.drift).toEqual([])
        expect(await projection()).toEqual(inline)
        const { rows: sessions } = await sql<{ session_id: string }>`select session_id::text from turnlog.sessions order by 1`.execute(store.db)
        const victims = sessions.filter((_, i) => (i + damage) % 3 === 0).map((s) => s.session_id)
        for (const [i, sid] of victims.entries()) {
          if (i % 3 === 0) await sql`delete from turnlog.live_messages where session_id = ${sid}`.execute(store.db)
          else if (i % 3 === 1) await sql`update turnlog.live_messages set partial = not partial, position = position + 1000 where session_id = ${sid}`.execute(store.db)
          else await sql`update turnlog.live_messages set event_seq = event_seq + 1 where session_id = ${sid}`.execute(store.db)
        }

        // when
        const repaired = await store.rebuild()

        // then: every session recomputed, the rows are the triggers' again, and verify agrees
        expect(repaired.rewritten).toBe(sessions.length)
        expect(await projection()).toEqual(inline)
        expect((await store.rebuild({ verify: true })).drift).toEqual([])
      }),
      { numRuns: NUM_RUNS },
    )
  }, 600_000)
})
