import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type SessionStore, type StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { sql } from 'kysely'

class Rollback extends Error {}

async function eventsOf(s: SessionStore, sid: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of s.events(sid)) out.push(e)
  return out
}

/** Fails instead of hanging when a call deadlocks (PGlite has one connection). */
async function within<T>(ms: number, work: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`still waiting after ${ms} ms: deadlocked?`)), ms)
  })
  try {
    return await Promise.race([work, timeout])
  } finally {
    clearTimeout(timer)
  }
}

const flavors = [
  { name: 'Postgres', kind: 'postgres' },
  { name: 'PGlite', kind: 'pglite' },
] as const

describe.each(flavors)('store.withTransaction(trx) ($name)', ({ name, kind }) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t), { pool: { max: 4 } })

  it('appends inside the caller transaction: rolled back, nothing is stored (and nothing is cached as durable)', async () => {
    // given
    const sid = await store.createSession()
    const m = createMessage({ role: 'user', content: 'rolled back' })
    let seenInside: string[] = []

    // when
    await expect(
      within(
        10_000,
        store.db.transaction().execute(async (trx) => {
          const t = store.withTransaction(trx)
          await t.append(sid, [m])
          await t.revise(sid, m.id, { role: 'user', content: 'rolled back too' })
          seenInside = (await t.load(sid)).messages.map((x) => String(x.payload.content))
          throw new Rollback('roll back on purpose')
        }),
      ),
    ).rejects.toBeInstanceOf(Rollback)

    // then: the transaction saw its own writes; afterwards they never happened
    expect(seenInside).toEqual(['rolled back too'])
    expect(await eventsOf(store, sid)).toEqual([])
    expect((await store.getSession(sid)).version).toBe(0)
    // the outer store did not learn "durable" from the rolled-back write: flushing writes it now
    expect(await store.flush(sid, [m])).toEqual({ version: 1, appended: [m.id], duplicates: [] })
  })

  it("committed with the caller transaction: stored, atomically with the caller's own statements", async () => {
    // given
    const sid = await store.createSession()
    const m = createMessage({ role: 'assistant', content: 'committed' })

    // when
    const result = await within(
      10_000,
      store.db.transaction().execute(async (trx) => {
        const r = await store.withTransaction(trx).append(sid, [m])
        await sql`update turnlog.sessions set metadata = '{"caller":"wrote this"}' where session_id = ${sid}`.execute(trx)
        // another connection does not see it before the commit (PGlite has no other connection)
        const before = name === 'Postgres' ? (await store.load(sid)).messages.length : 0
        return { r, before }
      }),
    )

    // then
    expect(result).toEqual({ r: { version: 1, appended: [m.id], duplicates: [] }, before: 0 })
    expect((await store.load(sid)).messages.map((x) => x.id)).toEqual([m.id])
    expect((await store.getSession(sid)).metadata).toEqual({ caller: 'wrote this' })
  })

  it('MESSAGE_CONFLICT inside the caller transaction: reported (no hang), and the evidence survives the rollback', async () => {
    // given
    const sid = await store.createSession()
    const original = createMessage({ role: 'user', content: 'original' })
    await store.append(sid, [original])
    const clash = createMessage({ role: 'user', content: 'clash' }, { id: original.id })
    const fresh = createMessage({ role: 'assistant', content: 'fresh' })
    let code: unknown

    // when
    await expect(
      within(
        10_000,
        store.db.transaction().execute(async (trx) => {
          try {
            await store.withTransaction(trx).append(sid, [fresh, clash])
          } catch (error) {
            code = isTurnlogError(error) ? error.code : error
            throw error
          }
        }),
      ),
    ).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' })

    // then
    expect(code).toBe('MESSAGE_CONFLICT')
    expect((await eventsOf(store, sid)).map((e) => e.messageId)).toEqual([original.id])
    const evidence = await store.conflicts(sid)
    expect(evidence).toHaveLength(1)
    expect(evidence[0]).toMatchObject({
      messageId: original.id,
      reason: 'content_mismatch',
      incomingPayload: { role: 'user', content: 'clash' },
    })
  })

  it('conflict evidence survives a failed standalone batch', async () => {
    // given
    const a = await store.createSession()
    const b = await store.createSession()
    const m = createMessage({ role: 'user', content: 'owned by a' })
    await store.append(a, [m])

    // when
    await expect(store.append(b, [createMessage({ role: 'user', content: 'new' }), m])).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' })

    // then
    expect(await eventsOf(store, b)).toEqual([])
    expect((await store.conflicts(b)).map((c) => [c.messageId, c.reason, c.otherSessionId])).toEqual([[m.id, 'foreign_session', a]])
  })
})
