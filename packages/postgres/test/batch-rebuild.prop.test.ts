import { describe, expect, it } from '@jest/globals'
import { createMessage, foldSession, type Message, type SessionId, type StoredEvent } from '@turnlog/core'
import fc from 'fast-check'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { sql } from 'kysely'
import { historyArb, newStats, runHistory } from './support/projection-harness.js'
import { damageLiveMessages } from './support/structure-differential.js'

// `rebuild()` recomputes projections in batches with turnlog.rebuild_sessions (0004): a set-based path
// for logs of plain appends (and forks), a replay through project_event for the rest. Whatever the
// history, the rows it leaves must be exactly the rows the triggers wrote, positions included (later
// compactions and appends build on positions), whether the projection was intact or damaged.
const NUM_RUNS = Number(process.env['TURNLOG_PROP_RUNS'] ?? 60)

let store: PostgresStore
const stats = newStats()

useTestStore((t) => ({ store } = t), { pool: { max: 4 } })

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
        const { rows: sessions } = await sql<{ session_id: string }>`select session_id::text from turnlog.sessions order by 1`.execute(
          store.db,
        )
        const victims = sessions.filter((_, i) => (i + damage) % 3 === 0).map((s) => s.session_id)
        for (const [i, sid] of victims.entries()) await damageLiveMessages(store.db, sid, i)

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

  it('rebuild() while writers append, rewind and compact the same sessions: every batch commits, and the projections end equal to their logs', async () => {
    // given: 12 sessions and 4 writers, each doing a fixed number of operations on its own 3 sessions
    const sessions: SessionId[] = []
    for (let i = 0; i < 12; i++) sessions.push(await store.createSession())
    const text = (content: string): Message => createMessage({ role: 'user', content })
    let writing = true
    const writer = async (w: number): Promise<void> => {
      for (let op = 0; op < 40; op++) {
        const sid = sessions[(w * 3 + (op % 3)) % sessions.length] as SessionId
        const live = (await store.load(sid)).messages
        if (op % 7 === 6 && live.length > 2) await store.rewind(sid, { from: (live[live.length - 1] as Message).id })
        else if (op % 11 === 10 && live.length > 3)
          await store.compact(sid, { covered: live.slice(0, 2).map((m) => m.id), summary: text(`summary ${op}`) })
        else await store.append(sid, [text(`w${w} op${op} a`), text(`w${w} op${op} b`)])
      }
    }

    // when: full rebuilds run back to back until the writers are done
    const rebuilds: { drift: number; sessions: number }[] = []
    const rebuilder = async (): Promise<void> => {
      while (writing) {
        const r = await store.rebuild()
        rebuilds.push({ drift: r.drift.length, sessions: r.sessions })
      }
    }
    const running = rebuilder()
    await Promise.all([0, 1, 2, 3].map(writer))
    writing = false
    await running

    // then: no rebuild saw drift (each read its sessions under their locks), and every projection is its fold
    expect(rebuilds.length).toBeGreaterThan(0)
    expect(rebuilds.filter((r) => r.drift > 0)).toEqual([])
    expect((await store.rebuild({ verify: true })).drift).toEqual([])
    for (const sid of sessions) {
      const events: StoredEvent[] = []
      for await (const e of store.events(sid)) events.push(e)
      expect((await store.load(sid)).messages.map((m) => m.id)).toEqual(foldSession(events).live)
    }
  }, 120_000)
})
