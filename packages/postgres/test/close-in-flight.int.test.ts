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
import { STORE_KINDS, createTestDatabase } from '@turnlog/testing'
import { openStore, type OpenStoreConfig } from '@turnlog/postgres'
import { exportSessions, importEvents } from '@turnlog/audit'

/** Where a store of `kind` keeps its data, so a second store can read what the first acknowledged. */
async function place(kind: (typeof STORE_KINDS)[number]): Promise<{ options: OpenStoreConfig; drop: () => Promise<void> }> {
  if (kind === 'pglite') {
    const dataDir = await mkdtemp(join(tmpdir(), 'turnlog-close-'))
    return { options: { embedded: true, dataDir }, drop: () => rm(dataDir, { recursive: true, force: true }) }
  }
  const db = await createTestDatabase()
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
