/**
 * Embedded PGlite is one connection, and a store's transaction holds it until it ends. A call of the
 * same store made inside that transaction (from `atomically()` work, or from a transactional
 * subscription handler) waits for the transaction, which waits for the call: before, it never returned,
 * and `stop()` and `close()` then waited forever too (operations.md said so). Now such a call is
 * refused at once (`INVALID_INPUT`, `details.reason: 'pglite-connection-held'`), the work's error rolls
 * the transaction back as any error does, and the store keeps serving. The store atomically() hands to
 * the work, and the handler's `context.transaction`, are the way to write there; on a Postgres server
 * the same outer call takes another pooled connection and is not refused.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type SessionId } from '@turnlog/core'
import { openTestStore, STORE_KINDS } from '@turnlog/testing'

/** `promise`, or an error naming `what` after `ms` (a hang fails the test instead of the run). */
async function within<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer after ${ms} ms`)), ms)
  })
  try {
    return await Promise.race([promise, timeout])
  } finally {
    clearTimeout(timer)
  }
}

const text = (content: string) => createMessage({ role: 'user', content })

describe('a store call inside a transaction holding its one connection (pglite)', () => {
  it('inside atomically(): refused at once, the work rolls back, the bound store and later calls work', async () => {
    const { store, close } = await openTestStore('pglite')
    try {
      // given
      const session: SessionId = await store.createSession()

      // when the work calls the store itself (append, a read, a nested atomically) after a write through the bound store
      const outcomes: unknown[] = []
      for (const call of [
        () => store.append(session, [text('outer')]),
        () => store.load(session),
        () => store.atomically(async () => undefined),
      ]) {
        const error = await within(
          store
            .atomically(async (tx) => {
              await tx.append(session, [text('inner')])
              await call()
            })
            .then(
              () => 'resolved',
              (e: unknown) => e,
            ),
          10_000,
          'atomically() calling its own store',
        )
        outcomes.push(isTurnlogError(error) ? [error.code, error.details['reason']] : error)
      }

      // then each is refused, and nothing of the work was written
      expect(outcomes).toEqual(Array(3).fill(['INVALID_INPUT', 'pglite-connection-held']))
      expect((await store.load(session)).messages).toEqual([])
      // and the bound store writes, and the store serves calls after
      await store.atomically(async (tx) => {
        await tx.append(session, [text('through tx')])
      })
      await store.append(session, [text('after')])
      expect((await store.load(session)).messages.map((m) => (m.payload as { content: string }).content)).toEqual(['through tx', 'after'])
    } finally {
      await within(close(), 10_000, 'close()')
    }
  })

  it('inside a transactional handler: refused, the handler fails, stop() and close() return; context.transaction writes', async () => {
    const { store, close } = await openTestStore('pglite')
    try {
      // given an event to deliver
      const source = await store.createSession()
      const target = await store.createSession()
      await store.append(source, [text('event')])

      // when a transactional handler calls the store itself
      const seen: unknown[] = []
      const sub = store.subscribe(
        { name: 'calls-its-store' },
        async (event) => {
          if (event.sessionId !== source) return
          try {
            await store.append(target, [text('from the handler')])
            seen.push('appended')
          } catch (error) {
            seen.push(isTurnlogError(error) ? [error.code, error.details['reason']] : error)
            throw error
          }
        },
        { transactional: true, pollIntervalMs: 20, maxAttempts: 1 },
      )
      const failed = await within(
        sub.catchUp().then(
          () => 'caught up',
          (e: unknown) => e,
        ),
        10_000,
        'a transactional handler calling its store',
      )

      // then the call was refused, the subscription failed on that event, and stop() returns
      expect(seen).toEqual([['INVALID_INPUT', 'pglite-connection-held']])
      expect(failed).toMatchObject({ code: 'SUBSCRIPTION_FAILED' })
      await within(sub.stop(), 10_000, 'stop()')
      expect((await store.load(target)).messages).toEqual([])

      // and through context.transaction the same write goes in the handler's transaction
      const written = store.subscribe(
        { name: 'writes-through-context' },
        async (event, context) => {
          if (event.sessionId !== source || context.transaction === undefined) return
          await store.withTransaction(context.transaction).append(target, [text('from the handler')])
        },
        { transactional: true, pollIntervalMs: 20 },
      )
      await within(written.catchUp(), 10_000, 'a handler writing through context.transaction')
      await within(written.stop(), 10_000, 'stop()')
      expect((await store.load(target)).messages).toHaveLength(1)
    } finally {
      await within(close(), 10_000, 'close()')
    }
  })
})

describe.each(STORE_KINDS)('the same store call outside such a transaction (%s)', (kind) => {
  it('is not refused: a call after atomically() returned, and inside atomically() on a server (another pooled connection)', async () => {
    const { store, close } = await openTestStore(kind)
    try {
      const session = await store.createSession()
      const other = await store.createSession()
      await store.atomically(async (tx) => {
        await tx.append(session, [text('inner')])
        // on PGlite only the bound store may be used here; on a server another session is fine
        if (kind === 'postgres') await store.append(other, [text('outer, another session')])
      })
      await store.append(session, [text('after')])
      expect((await store.load(session)).messages).toHaveLength(2)
      expect((await store.load(other)).messages).toHaveLength(kind === 'postgres' ? 1 : 0)
    } finally {
      await close()
    }
  })
})
