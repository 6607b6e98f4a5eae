import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { sql, type Kysely } from 'kysely'
import { readFileSync } from 'node:fs'
import {
  CROWDED_COMPACTION,
  FINALIZED_PENDING_SUMMARY,
  compareSession,
  insertRawEvents,
  rawEvents,
  tableRows,
  type RawStep,
} from './support/structure-differential.js'
import { up as migrate0004 } from '../src/migrations/0004_repair_compaction_placement.js'

// How a compaction places its summaries, in the two cases only a log written around the store (an
// import) reaches: an append is placed at its seq and a compaction may place more summaries than it
// covers, so project_event numbers the live list again when a position would pass the event's seq; and
// a summary finalized while pending is placed final. Migration 0004 brings the function and replays the
// sessions an earlier version left wrong.

let store: PostgresStore

useTestStore((t) => ({ store } = t), { pool: { max: 2 } })

const MIGRATION = '0004_repair_compaction_placement'

/** `project_event` as the releases before 0004 had it (unchanged from 13da962 until then). */
const EARLIER = readFileSync(new URL('./fixtures/release-13da962/functions/project_event.sql', import.meta.url), 'utf8').replace(
  /^create function /m,
  'create or replace function ',
)

/** `turnlog.project_event`'s definition. */
async function projectEventDef(): Promise<string> {
  const { rows } = await sql<{
    def: string
  }>`select pg_get_functiondef('turnlog.project_event(turnlog.events)'::regprocedure) as def`.execute(store.db)
  return rows[0]?.def ?? ''
}

/** A session holding the first `n` events of `steps`' log, one INSERT each. */
async function rawSession(steps: readonly RawStep[], n: number): Promise<SessionId> {
  const sid = await store.createSession()
  const events = rawEvents(steps).slice(0, n)
  for (const [i, e] of events.entries()) await insertRawEvents(store.db, sid, i, [e])
  return sid
}

const positions = async (sid: SessionId): Promise<number[]> => (await tableRows(store, sid)).map((r) => r.position)

describe('how a compaction places its summaries', () => {
  it('more summaries than covered: the live list is numbered again (positions at most the version), so the next append sorts last; load and the table agree with the spec', async () => {
    // given: the history up to its compaction (seq 5), which places three summaries where one message was
    const sid = await rawSession(CROWDED_COMPACTION.steps, 5)
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

  it('a summary finalized while pending: load and load({ at }) both show it final (no status)', async () => {
    // given / when
    const sid = await rawSession(FINALIZED_PENDING_SUMMARY.steps, 4)

    // then
    await compareSession(store, sid, 0, 'the compaction of a finalized summary')
    const loaded = (await store.load(sid)).messages
    const folded = (await store.load(sid, { at: 4 })).messages
    // the summary alone is live; its status is absent (final), not 'partial'
    expect(loaded.map((m) => [m.id, m.status])).toEqual([[expect.any(String), undefined]])
    expect(folded.map((m) => [m.id, m.status])).toEqual(loaded.map((m) => [m.id, m.status]))
  })

  it(`${MIGRATION} replays the sessions the earlier project_event left wrong (a shared position; a position past the version; a finalized summary placed partial) and writes nothing of the others`, async () => {
    // given: the earlier project_event, and sessions it projects
    const current = await projectEventDef()
    await sql.raw(EARLIER).execute(store.db)
    expect(await projectEventDef()).not.toBe(current)
    let shared: SessionId
    let past: SessionId
    let finalized: SessionId
    let healthy: SessionId
    try {
      shared = await rawSession(CROWDED_COMPACTION.steps, 6)
      past = await rawSession(CROWDED_COMPACTION.steps, 5)
      finalized = await rawSession(FINALIZED_PENDING_SUMMARY.steps, 4)
      healthy = await store.createSession()
      const a = createMessage({ role: 'user', content: 'a' })
      const streaming = createMessage({ role: 'assistant', content: 'b' }, { status: 'partial' })
      await store.append(healthy, [a, streaming])
      await store.finalize(healthy, streaming.id)
      await store.append(healthy, [createMessage({ role: 'assistant', content: 'c' }, { status: 'partial' })])
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
    expect((await tableRows(store, finalized)).map((r) => r.partial)).toEqual([true])
    const rowVersions = sql<{ xmin: string }>`select xmin::text from turnlog.live_messages where session_id = ${healthy} order by position`
    const untouched = (await rowVersions.execute(store.db)).rows

    // when: the migration runs again (its up(): the migrator runs no migration older than the last applied)
    await store.db.transaction().execute((trx) => migrate0004(trx as Kysely<unknown>))

    // then
    expect(await projectEventDef()).toBe(current)
    await compareSession(store, shared, 0, `${MIGRATION} (shared position)`)
    await compareSession(store, past, 0, `${MIGRATION} (position past the version)`)
    await compareSession(store, finalized, 0, `${MIGRATION} (finalized summary)`)
    expect(Math.max(...(await positions(past)))).toBeLessThanOrEqual(5)
    const next = createMessage({ role: 'user', content: 'next' })
    await store.append(past, [next])
    expect((await store.load(past)).messages.map((m) => m.id).at(-1)).toBe(next.id)
    await compareSession(store, past, 0, 'an append after the repair')
    expect((await rowVersions.execute(store.db)).rows).toEqual(untouched)
    expect((await store.rebuild({ verify: true })).drift).toEqual([])
  })
})
