/**
 * Embedded PGlite is one connection, and a store's transaction holds it until it ends. A call of the
 * same store made inside that transaction (from `atomically()` work, or from a transactional
 * subscription handler) waits for the transaction, which waits for the call: before, it never returned,
 * and `stop()` and `close()` then waited forever too (operations.md said so). Now such a call is
 * refused at once (`INVALID_INPUT`, `details.reason: 'pglite-connection-held'`), the work's error rolls
 * the transaction back as any error does, and the store keeps serving. The store atomically() hands to
 * the work, and the handler's `context.transaction`, are the way to write there; on a Postgres server
 * the same outer call takes another pooled connection and is not refused.
 *
 * The mark is the PGlite instance, not the store: a second store opened on the same instance
 * (`openStore({ pglite })` twice) shares its one connection, and its call from inside the first
 * store's transaction waited forever too (the two docs said so, as a known hang); now it is refused
 * the same way. Its calls from outside that transaction still wait their turn and succeed.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { openMigratedPGlite, openTestStore, STORE_KINDS } from '@turnlog/testing'
import { gate } from './support/gate.js'

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

/** The code and `details.reason` of a TurnlogError, else the value itself. */
const outcome = (value: unknown): unknown => (isTurnlogError(value) ? [value.code, value.details['reason']] : value)

/** The text contents of the session's live messages. */
async function contents(store: PostgresStore, session: SessionId): Promise<string[]> {
  return (await store.load(session)).messages.map((m) => (m.payload as { content: string }).content)
}

/** Two stores opened on one new (migrated) PGlite instance, and a closer that closes both stores and the instance. */
async function twoStoresOnOneInstance(): Promise<{ a: PostgresStore; b: PostgresStore; close: () => Promise<void> }> {
  const pglite = await openMigratedPGlite()
  const a = await openStore({ pglite })
  const b = await openStore({ pglite })
  return {
    a,
    b,
    close: async () => {
      await within(a.close(), 10_000, "a's close()")
      await within(b.close(), 10_000, "b's close()")
      await pglite.close()
    },
  }
}

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

describe('a call of another store on the same PGlite instance inside such a transaction', () => {
  it("inside the first store's atomically(): refused at once, the work rolls back; from outside it waits its turn and succeeds", async () => {
    const { a, b, close } = await twoStoresOnOneInstance()
    try {
      // given a session both stores see
      const session = await a.createSession()

      // when a's work calls the other store (append, a read, its atomically) after a write through the bound store
      const outcomes: unknown[] = []
      for (const call of [() => b.append(session, [text('from b')]), () => b.load(session), () => b.atomically(async () => undefined)]) {
        const settled = await within(
          a
            .atomically(async (tx) => {
              await tx.append(session, [text('inner')])
              await call()
            })
            .then(
              () => 'resolved',
              (e: unknown) => e,
            ),
          10_000,
          'atomically() calling another store on its PGlite instance',
        )
        outcomes.push(outcome(settled))
      }

      // then each is refused, and nothing of the work was written
      expect(outcomes).toEqual(Array(3).fill(['INVALID_INPUT', 'pglite-connection-held']))
      expect(await contents(b, session)).toEqual([])

      // when b appends from outside a's work while that work holds the connection
      const held = gate()
      const entered = gate()
      const outer = a.atomically(async (tx) => {
        await tx.append(session, [text('a, held')])
        entered.open()
        await held.wait
      })
      await entered.wait
      const fromOutside = b.append(session, [text('b, outside')])
      held.open()

      // then it is not refused: it waits for a's transaction, and both are stored
      await within(outer, 10_000, "a's atomically()")
      await within(fromOutside, 10_000, "b's append from outside a's work")
      expect(await contents(a, session)).toEqual(['a, held', 'b, outside'])
    } finally {
      await close()
    }
  })

  it("inside the first store's transactional handler: refused, the handler fails, both stores stop and close", async () => {
    const { a, b, close } = await twoStoresOnOneInstance()
    try {
      // given an event to deliver
      const source = await a.createSession()
      const target = await a.createSession()
      await a.append(source, [text('event')])

      // when a's transactional handler calls the other store
      const seen: unknown[] = []
      const sub = a.subscribe(
        { name: 'calls-another-store' },
        async (event) => {
          if (event.sessionId !== source) return
          try {
            await b.append(target, [text('from the handler')])
            seen.push('appended')
          } catch (error) {
            seen.push(outcome(error))
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
        'a transactional handler calling another store on its PGlite instance',
      )

      // then the call was refused, the subscription failed on that event, and stop() returns
      expect(seen).toEqual([['INVALID_INPUT', 'pglite-connection-held']])
      expect(failed).toMatchObject({ code: 'SUBSCRIPTION_FAILED' })
      await within(sub.stop(), 10_000, 'stop()')
      expect(await contents(b, target)).toEqual([])
      // and b serves calls after
      await b.append(target, [text('after')])
      expect(await contents(a, target)).toEqual(['after'])
    } finally {
      await close()
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
