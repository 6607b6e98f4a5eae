import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type MessageId, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { sql } from 'kysely'

let store: PostgresStore

useTestStore((t) => ({ store } = t), { pool: { max: 2 } })

const text = (content: string, role: 'user' | 'assistant' = 'user', partial = false): Message =>
  createMessage({ role, content }, partial ? { status: 'partial' } : {})

/** A session touched by every operation; returns its live ids. */
async function busySession(): Promise<{ sid: SessionId; live: MessageId[] }> {
  const sid = await store.createSession()
  const [a, b, c, d, e] = [text('a'), text('b', 'assistant'), text('c'), text('d', 'assistant', true), text('e')]
  await store.append(sid, [a, b, c, d, e])
  await store.revise(sid, b.id, { role: 'assistant', content: 'b2' })
  await store.rewind(sid, { from: e.id })
  await store.compact(sid, { covered: [a.id], summary: text('summary') })
  const live = (await store.load(sid)).messages.map((m) => m.id)
  return { sid, live }
}

describe('rebuild after projection corruption (Postgres, raw SQL)', () => {
  it('a deleted live_messages row: verify reports the drift without writing; rebuild repairs it', async () => {
    // given
    const { sid, live } = await busySession()
    const victim = live[1] as MessageId
    await sql`delete from turnlog.live_messages where session_id = ${sid} and message_id = ${victim}`.execute(store.db)
    const corrupted = (await store.load(sid)).messages.map((m) => m.id)

    // when
    const verify = await store.rebuild({ sessionId: sid, verify: true })
    const stillCorrupted = (await store.load(sid)).messages.map((m) => m.id)
    const repair = await store.rebuild({ sessionId: sid })

    // then
    expect(corrupted).toEqual(live.filter((id) => id !== victim))
    expect(verify.rewritten).toBe(0)
    expect(verify.drift).toEqual([{ sessionId: sid, expected: live, actual: corrupted, explanation: expect.any(String) }])
    expect(stillCorrupted).toEqual(corrupted)
    expect(repair.rewritten).toBe(1)
    expect(repair.drift).toHaveLength(1)
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual(live)
    expect((await store.rebuild({ sessionId: sid, verify: true })).drift).toEqual([])
  })

  it('swapped positions, a stale revision pointer, a wrong partial flag and a resurrected row are all drift; a full rebuild repairs only what drifted', async () => {
    // given: four corrupted sessions and one healthy one
    const healthy = await busySession()
    const swapped = await busySession()
    const stale = await busySession()
    const flag = await busySession()
    const zombie = await busySession()
    const [p0, p1] = [swapped.live[0] as MessageId, swapped.live[1] as MessageId]
    await sql`update turnlog.live_messages l set position = case when l.message_id = ${p0}::uuid then
                (select position from turnlog.live_messages where session_id = ${swapped.sid} and message_id = ${p1})
              else (select position from turnlog.live_messages where session_id = ${swapped.sid} and message_id = ${p0}) end
              where l.session_id = ${swapped.sid} and l.message_id in (${p0}, ${p1})`.execute(store.db)
    // b was revised: point it back at its first version
    await sql`update turnlog.live_messages l set event_seq = (select min(e.seq) from turnlog.events e where e.session_id = l.session_id and e.message_id = l.message_id)
              where l.session_id = ${stale.sid} and l.message_id = ${stale.live[1] as string}`.execute(store.db)
    await sql`update turnlog.live_messages set partial = not partial where session_id = ${flag.sid} and message_id = ${flag.live[3] as string}`.execute(
      store.db,
    )
    // the retracted message comes back to life
    await sql`insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
              select session_id, message_id, 1000, seq, false from turnlog.events
               where session_id = ${zombie.sid} and seq = 5`.execute(store.db)
    const corrupted = [swapped, stale, flag, zombie].map((s) => s.sid).sort()

    // when
    const verify = await store.rebuild({ verify: true })
    const repair = await store.rebuild()
    const after = await store.rebuild({ verify: true })

    // then
    expect(verify.drift.map((d) => d.sessionId).sort()).toEqual(corrupted)
    expect(verify.rewritten).toBe(0)
    expect(repair.drift.map((d) => d.sessionId).sort()).toEqual(corrupted)
    expect(repair.rewritten).toBe(repair.sessions)
    expect(after.drift).toEqual([])
    for (const s of [healthy, swapped, stale, flag, zombie]) expect((await store.load(s.sid)).messages.map((m) => m.id)).toEqual(s.live)
    expect((await store.load(stale.sid)).messages[1]?.payload.content).toBe('b2')
    expect((await store.load(flag.sid)).messages[3]?.status).toBe('partial')
  })
})
