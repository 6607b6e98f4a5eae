import { describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { listSubscriptions, rebaseSubscription, type PostgresStore } from '@turnlog/postgres'
import { sql } from 'kysely'
import { useTestStoreOfKind } from '@turnlog/testing'
import { subscribeRecordingSeqs } from './support/subscription-support.js'

// Embedded PGlite: one connection, one process. Subscriptions poll within the process; one consumer per
// name is enforced in the process.

let store: PostgresStore

useTestStoreOfKind('pglite', (t) => ({ store } = t))

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe('subscriptions on PGlite', () => {
  it('deliver in order by polling, with a transactional projection, one consumer per name, and rebase', async () => {
    // given
    const session = await store.createSession()
    await store.append(session, [createMessage({ role: 'user', content: 'one' }), createMessage({ role: 'assistant', content: 'two' })])
    await sql`create table seen (seq int primary key)`.execute(store.db)
    const sub = store.subscribe(
      { name: 'embedded', filter: { sessionId: session } },
      async (e, context) => {
        await sql`insert into seen (seq) values (${e.seq})`.execute(context.transaction!)
      },
      { transactional: true, pollIntervalMs: 20 },
    )

    // when
    await sub.catchUp()
    await store.append(session, [createMessage({ role: 'user', content: 'three' })])
    const deadline = Date.now() + 5_000
    while (sub.delivered < 3 && Date.now() < deadline) await sleep(10)

    // then
    const { rows } = await sql<{ seq: number }>`select seq from seen order by seq`.execute(store.db)
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3])
    const second = store.subscribe({ name: 'embedded' }, () => {}, { waitForLock: false })
    await expect(second.done).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
    expect((await listSubscriptions(store)).find((s) => s.name === 'embedded')).toMatchObject({ active: true, delivered: 3 })
    await expect(rebaseSubscription(store, 'embedded', { toStart: true })).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })

    // when: stopped and rebased to the start, a plain handler sees all three again
    await sub.stop()
    await rebaseSubscription(store, 'embedded', { toStart: true })
    const { sub: replay, seen: replayed } = subscribeRecordingSeqs(
      store,
      { name: 'embedded', filter: { sessionId: session } },
      { pollIntervalMs: 20 },
    )
    await replay.catchUp()

    // then
    expect(replayed).toEqual([1, 2, 3])
    expect(await store.oldestOpenTransaction()).toBeNull()
    await replay.stop()
  })

  it('transactional: a failed call (an SQL error) rolls the batch back; the call before it is made again (attempt 2), each write commits once', async () => {
    // given: three events in one batch; a handler that writes, then fails once on the second with an
    // SQL error (which aborts the transaction)
    const session = await store.createSession()
    await store.append(
      session,
      [1, 2, 3].map((i) => createMessage({ role: 'user', content: `event ${i}` })),
    )
    await sql`create table seen_once (seq int not null)`.execute(store.db)
    const calls: string[] = []
    const sub = store.subscribe(
      { name: 'embedded-fails-once', filter: { sessionId: session } },
      async (e, context) => {
        calls.push(`${e.seq}#${context.attempt}`)
        await sql`insert into seen_once (seq) values (${e.seq})`.execute(context.transaction!)
        if (e.seq === 2 && context.attempt === 1) await sql`select 1 / 0`.execute(context.transaction!)
      },
      { transactional: true, pollIntervalMs: 20, backoff: () => 1 },
    )

    // when
    await sub.catchUp()
    await sub.stop()

    // then: 1 and 2 twice (attempts 1 and 2), 3 once; each write committed once
    expect(calls).toEqual(['1#1', '2#1', '1#2', '2#2', '3#1'])
    const { rows } = await sql<{ seq: number }>`select seq from seen_once order by seq`.execute(store.db)
    expect(rows.map((r) => r.seq)).toEqual([1, 2, 3])
    expect(sub.delivered).toBe(3)
  })
})
