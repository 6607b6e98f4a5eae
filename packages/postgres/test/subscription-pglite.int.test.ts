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
})
