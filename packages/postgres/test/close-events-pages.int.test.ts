/**
 * `close()` while an `events()` iteration reads the log in pages (errors.md, `STORE_CLOSED`: a call
 * already running finishes first, one that had not yet reached the database gets `STORE_CLOSED`).
 * Each page is its own read: the page being read when `close()` is called is delivered whole and
 * `close()` resolves after it; the next page is `STORE_CLOSED`, never a driver error ("PGlite is
 * closing", a pool that has ended). A review suspected close() did not wait for the page in flight;
 * it does (each page is a tracked `run`, which checks the store open first): this file pins it.
 * (A new iteration after close() is store-lifecycle-adversarial.int.test.ts's.)
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type StoredEvent } from '@turnlog/core'
import { openStore, type OpenStoreConfig } from '@turnlog/postgres'
import { STORE_KINDS, createTestDatabase } from '@turnlog/testing'

/** Events per page of `events()` (read-operations.ts). */
const PAGE = 500

async function place(kind: (typeof STORE_KINDS)[number]): Promise<{ options: OpenStoreConfig; drop: () => Promise<void> }> {
  if (kind === 'pglite') return { options: { embedded: true }, drop: async () => {} }
  const db = await createTestDatabase()
  return { options: { connectionString: db.connectionString }, drop: () => db.drop() }
}

describe.each(STORE_KINDS)('close() during a paged events() iteration (%s)', (kind) => {
  it('delivers the page in flight, resolves after it, then refuses the next page with STORE_CLOSED', async () => {
    // given a session of two pages and more, its first page read and consumed
    const { options, drop } = await place(kind)
    const store = await openStore(options)
    try {
      const session = await store.createSession()
      const total = PAGE * 2 + 10
      await store.append(
        session,
        Array.from({ length: total }, (_, i) => createMessage({ role: 'user', content: `m${String(i)}` })),
      )
      const iterator = store.events(session)[Symbol.asyncIterator]()
      const seen: StoredEvent[] = []
      for (let i = 0; i < PAGE; i++) {
        const r = await iterator.next()
        if (r.done === true) throw new Error('the log ended early')
        seen.push(r.value)
      }

      // when the second page is being read and close() is called
      const order: string[] = []
      const secondPage = iterator.next().then((r) => {
        order.push('page')
        return r
      })
      const closed = store.close().then(() => order.push('close'))
      const first = await secondPage
      await closed

      // then the page in flight was delivered whole, before close() resolved
      expect(first.done).toBe(false)
      expect((first.value as StoredEvent).seq).toBe(PAGE + 1)
      expect(order).toEqual(['page', 'close'])
      for (let i = 1; i < PAGE; i++) {
        const r = await iterator.next()
        expect(r.done).toBe(false)
        expect((r.value as StoredEvent).seq).toBe(PAGE + 1 + i)
      }
      // and the page after it is STORE_CLOSED
      const next = await iterator.next().then(
        () => 'resolved',
        (error: unknown) => (isTurnlogError(error) ? error.code : error),
      )
      expect(next).toBe('STORE_CLOSED')
      expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: PAGE }, (_, i) => i + 1))
    } finally {
      await store.close()
      await drop()
    }
  }, 120_000)
})
