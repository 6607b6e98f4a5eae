import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import { migrateToLatest, type PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { sql } from 'kysely'
import { CROWDED_COMPACTION, compareSession, insertRawEvents, rawEvents, tableRows } from './support/structure-differential.js'

// An append is placed at its seq; a compaction may place more summaries than it covers. Migration 0004
// keeps every position at most the applying event's seq (project_event numbers the live list again when
// a compaction would pass it) and replays the sessions an earlier version left crowded.

let store: PostgresStore

useTestStore((t) => ({ store } = t), { pool: { max: 2 } })

const MIGRATION = '0004_repair_compaction_positions'

/** `turnlog.project_event`'s definition. */
async function projectEventDef(): Promise<string> {
  const { rows } = await sql<{
    def: string
  }>`select pg_get_functiondef('turnlog.project_event(turnlog.events)'::regprocedure) as def`.execute(store.db)
  return rows[0]?.def ?? ''
}

/** A session holding the first `n` events of the crowded history, in one INSERT each. */
async function crowdedSession(n: number): Promise<SessionId> {
  const sid = await store.createSession()
  const events = rawEvents(CROWDED_COMPACTION.steps).slice(0, n)
  for (const [i, e] of events.entries()) await insertRawEvents(store.db, sid, i, [e])
  return sid
}

const positions = async (sid: SessionId): Promise<number[]> => (await tableRows(store, sid)).map((r) => r.position)

describe('positions after a compaction placing more summaries than it covers', () => {
  it('the live list is numbered again: positions at most the version, so the next append sorts last (load and the table agree with the spec)', async () => {
    // given: the history up to its compaction (seq 5), which places three summaries where one message was
    const sid = await crowdedSession(5)
    expect(Math.max(...(await positions(sid)))).toBeLessThanOrEqual(5)

    // when: an append through the store
    const next = createMessage({ role: 'user', content: 'after the summaries' })
    await store.append(sid, [next])

    // then
    await compareSession(store, sid, 0, 'an append after the crowded compaction')
    const loaded = (await store.load(sid)).messages.map((m) => m.id)
    expect(loaded).toHaveLength(4)
    expect(loaded[3]).toBe(next.id)
  })

  it(`${MIGRATION} replays the sessions the earlier project_event left crowded (a shared position; a position past the version) and leaves the others untouched`, async () => {
    // given: the earlier project_event (without the renumbering), and sessions it projects
    const current = await projectEventDef()
    const earlier = current.replace(/\n\s*-- an append takes its seq as position[\s\S]*?end if;\n/, '\n')
    expect(earlier).not.toBe(current)
    await sql.raw(earlier).execute(store.db)
    let shared: SessionId
    let past: SessionId
    let healthy: SessionId
    try {
      shared = await crowdedSession(6)
      past = await crowdedSession(5)
      healthy = await store.createSession()
      const a = createMessage({ role: 'user', content: 'a' })
      await store.append(healthy, [a, createMessage({ role: 'assistant', content: 'b' })])
      await store.compact(healthy, {
        covered: [a.id],
        summary: [createMessage({ role: 'user', content: 's1' }), createMessage({ role: 'user', content: 's2' })],
      })
    } finally {
      await sql.raw(current).execute(store.db)
    }
    // the damage the earlier function did
    expect(await positions(shared)).toEqual([4, 5, 6, 6])
    expect(await positions(past)).toEqual([4, 5, 6])
    const untouched = await sql<{
      xmin: string
    }>`select xmin::text from turnlog.live_messages where session_id = ${healthy} order by position`.execute(store.db)

    // when: the migration runs again
    await sql`delete from turnlog.schema_migrations where name = ${MIGRATION}`.execute(store.db)
    const result = await migrateToLatest(store.db)

    // then
    expect(result.applied).toEqual([MIGRATION])
    expect(await projectEventDef()).toBe(current)
    await compareSession(store, shared, 0, `${MIGRATION} (shared position)`)
    await compareSession(store, past, 0, `${MIGRATION} (position past the version)`)
    expect(Math.max(...(await positions(past)))).toBeLessThanOrEqual(5)
    const next = createMessage({ role: 'user', content: 'next' })
    await store.append(past, [next])
    expect((await store.load(past)).messages.map((m) => m.id).at(-1)).toBe(next.id)
    await compareSession(store, past, 0, 'an append after the repair')
    const after = await sql<{
      xmin: string
    }>`select xmin::text from turnlog.live_messages where session_id = ${healthy} order by position`.execute(store.db)
    expect(after.rows).toEqual(untouched.rows)
    expect((await store.rebuild({ verify: true })).drift).toEqual([])
  })
})
