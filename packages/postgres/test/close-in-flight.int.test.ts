/**
 * `close()` while calls are running: each call started before it either finishes (its write stored,
 * acknowledged) or was refused with `STORE_CLOSED` before it wrote anything; never a driver error.
 * PGlite refused the statements of calls in flight once closing ("PGlite is closing", `DB_ERROR`),
 * where a `pg` pool's `end` lets checked-out clients finish; on Postgres an append that reached its
 * statement after the pool ended waited forever; an import and `atomically()` ran around the tracked
 * calls and failed under `close()` on both. One store per kind (PGlite's opens are what this file
 * spends its time on), closed with all of them running.
 */
import { describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createMessage, isTurnlogError, type SessionId } from '@turnlog/core'
import { STORE_KINDS, createTestDatabase, makeMigratedDataDir } from '@turnlog/testing'
import { openStore, type OpenStoreConfig } from '@turnlog/postgres'
import { exportSessions, importEvents } from '@turnlog/audit'

/**
 * Where a store of `kind` keeps its data (a migrated database), so a second store can read what the first
 * acknowledged.
 */
async function place(kind: (typeof STORE_KINDS)[number]): Promise<{ options: OpenStoreConfig; drop: () => Promise<void> }> {
  if (kind === 'pglite') {
    const dataDir = await mkdtemp(join(tmpdir(), 'turnlog-close-'))
    await makeMigratedDataDir(dataDir)
    return { options: { embedded: true, dataDir }, drop: () => rm(dataDir, { recursive: true, force: true }) }
  }
  const db = await createTestDatabase({ migrated: true })
  return { options: { connectionString: db.connectionString, groupCommit: false }, drop: () => db.drop() }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

describe.each(STORE_KINDS)('close() with calls in flight (%s)', (kind) => {
  it('lets every running call finish first: appends (stored and acknowledged, or STORE_CLOSED and not stored), an import read slowly, and atomically()', async () => {
    // given: a store holding a few sessions, their export (read back into it slowly: each session is
    // compared with what is stored, so the import runs as long as its source does), and two sessions
    const { options, drop } = await place(kind)
    const store = await openStore(options)
    for (let i = 0; i < 5; i++) {
      const s = await store.createSession()
      await store.append(s, [createMessage({ role: 'user', content: `q${String(i)}` }), createMessage({ role: 'assistant', content: 'a' })])
    }
    const lines: string[] = []
    for await (const line of exportSessions(store, { all: true })) lines.push(line)
    const [appendsTo, atomicTo] = [await store.createSession(), await store.createSession()] as [SessionId, SessionId]
    async function* slowly(): AsyncGenerator<string> {
      for (const line of lines) {
        await sleep(5)
        yield line
      }
    }
    const order: string[] = []
    const imported = importEvents(store, slowly()).then((r) => {
      order.push('import')
      return r
    })
    const atomic = store
      .atomically(async (tx) => {
        await tx.append(atomicTo, [createMessage({ role: 'user', content: 'in a transaction' })])
        await sleep(100)
        await tx.append(atomicTo, [createMessage({ role: 'assistant', content: 'same transaction' })])
      })
      .then(() => order.push('atomically'))
    await sleep(20)
    const messages = Array.from({ length: 20 }, (_, i) => createMessage({ role: 'user', content: `m${String(i)}` }))
    const calls = messages.map((m) => store.append(appendsTo, [m]))

    // when
    await store.close()
    order.push('close')
    const outcomes = await Promise.allSettled(calls)

    // then: the import and the transaction finished before close resolved
    expect((await imported).sessions).toBe(5)
    await atomic
    expect(order.at(-1)).toBe('close')
    // no append failed for another reason than the store being closed before it started
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []))
    for (const error of errors) expect(isTurnlogError(error, 'STORE_CLOSED') ? 'STORE_CLOSED' : error).toBe('STORE_CLOSED')
    const acknowledged = messages.filter((_, i) => outcomes[i]?.status === 'fulfilled').map((m) => m.id)
    expect(acknowledged.length).toBeGreaterThan(0)
    // what was acknowledged is stored, and nothing else; the transaction's two messages are
    const reader = await openStore(options)
    try {
      const stored = (await reader.load(appendsTo)).messages.map((m) => m.id)
      expect([...stored].sort()).toEqual([...acknowledged].sort())
      expect((await reader.load(atomicTo)).messages).toHaveLength(2)
    } finally {
      await reader.close()
      await drop()
    }
  })
})

/** `p`, or a rejection after `ms`: a call that waits for itself fails the test instead of hanging it. */
async function within<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} did not settle within ${String(ms)} ms`)), ms)
  })
  try {
    return await Promise.race([p, timeout])
  } finally {
    clearTimeout(timer)
  }
}

describe.each(STORE_KINDS)('close() from inside a call it waits for (%s)', (kind) => {
  it('refuses with INVALID_INPUT inside atomically() and a subscription handler (it waited for itself forever); the store stays open, and closes after', async () => {
    // given a store, and a second one (closing another store from inside is allowed)
    const { options, drop } = await place(kind)
    const store = await openStore(options)
    const otherPlace = kind === 'pglite' ? await place(kind) : undefined // an embedded store of its own PGlite
    const other = await openStore(otherPlace?.options ?? options)
    try {
      const session = await store.createSession()
      // when atomically()'s work closes its own store
      const inAtomically = await within(
        store
          .atomically(async (tx) => {
            await tx.append(session, [createMessage({ role: 'user', content: 'kept' })])
            await store.close()
          })
          .then(
            () => undefined,
            (error: unknown) => error,
          ),
        10_000,
        'atomically() closing its store',
      )
      // then close() refused, the transaction rolled back with that error, and the store is still open
      expect(isTurnlogError(inAtomically, 'INVALID_INPUT')).toBe(true)
      expect(inAtomically).toMatchObject({ details: { field: 'close' } })
      expect((await store.load(session)).messages).toHaveLength(0)
      // and closing another store from inside is fine
      await within(
        store.atomically(async () => other.close()),
        10_000,
        'atomically() closing another store',
      )

      // when a subscription handler closes the store it is subscribed on
      await store.append(session, [createMessage({ role: 'user', content: 'delivered' })])
      const seen: unknown[] = []
      const sub = store.subscribe(
        { name: 'closes-its-store' },
        async () => {
          try {
            await store.close()
            seen.push('closed')
          } catch (error) {
            seen.push(isTurnlogError(error) ? error.code : error)
          }
        },
        { pollIntervalMs: 20 },
      )
      await within(sub.catchUp(), 10_000, 'a handler closing its store')
      await sub.stop()
      // then it was refused the same way, and the store still serves calls
      expect(seen).toEqual(['INVALID_INPUT'])
      await store.append(session, [createMessage({ role: 'assistant', content: 'still open' })])
      // and outside any call, close() closes
      await within(store.close(), 10_000, 'close() outside')
      await expect(store.load(session)).rejects.toMatchObject({ code: 'STORE_CLOSED' })
    } finally {
      await store.close().catch(() => {})
      await other.close().catch(() => {})
      await otherPlace?.drop()
      await drop()
    }
  })
})
