/**
 * `close()` while calls are running: each call started before it either finishes (its write stored,
 * acknowledged) or was refused with `STORE_CLOSED` before it wrote anything; never a driver error.
 * PGlite refused the statements of calls in flight once closing ("PGlite is closing", `DB_ERROR`),
 * where a `pg` pool's `end` lets checked-out clients finish.
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

describe.each(STORE_KINDS)('close() with calls in flight (%s)', (kind) => {
  it('lets every running call finish: each append is stored and acknowledged, or refused with STORE_CLOSED and not stored', async () => {
    // given: a session, and twenty appends started just before close()
    const { options, drop } = await place(kind)
    const store = await openStore(options)
    const sessionId: SessionId = await store.createSession()
    const messages = Array.from({ length: 20 }, (_, i) => createMessage({ role: 'user', content: `m${String(i)}` }))
    const calls = messages.map((m) => store.append(sessionId, [m]))

    // when
    await store.close()
    const outcomes = await Promise.allSettled(calls)

    // then: no call failed for another reason than the store being closed before it started
    const errors = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as unknown] : []))
    for (const error of errors) expect(isTurnlogError(error, 'STORE_CLOSED') ? 'STORE_CLOSED' : error).toBe('STORE_CLOSED')
    const acknowledged = messages.filter((_, i) => outcomes[i]?.status === 'fulfilled').map((m) => m.id)
    expect(acknowledged.length).toBeGreaterThan(0)
    // what was acknowledged is stored, and nothing else
    const reader = await openStore(options)
    try {
      const stored = (await reader.load(sessionId)).messages.map((m) => m.id)
      expect([...stored].sort()).toEqual([...acknowledged].sort())
    } finally {
      await reader.close()
      await drop()
    }
  })

  it('lets a running atomically() and a running import finish before it resolves', async () => {
    // given: a store holding a few sessions, and their export read back into it slowly (each session
    // is compared with what is stored: the import runs as long as its source does)
    const { options, drop } = await place(kind)
    const store = await openStore(options)
    for (let i = 0; i < 5; i++) {
      const s = await store.createSession()
      await store.append(s, [createMessage({ role: 'user', content: `q${String(i)}` }), createMessage({ role: 'assistant', content: 'a' })])
    }
    const lines: string[] = []
    for await (const line of exportSessions(store, { all: true })) lines.push(line)
    const sessionId = await store.createSession()
    async function* slowly(): AsyncGenerator<string> {
      for (const line of lines) {
        await new Promise((resolve) => setTimeout(resolve, 5))
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
        await tx.append(sessionId, [createMessage({ role: 'user', content: 'in a transaction' })])
        await new Promise((resolve) => setTimeout(resolve, 100))
        await tx.append(sessionId, [createMessage({ role: 'assistant', content: 'same transaction' })])
      })
      .then(() => order.push('atomically'))
    await new Promise((resolve) => setTimeout(resolve, 20))

    // when
    await store.close()
    order.push('close')

    // then: both finished, before close resolved (before the fix: DB_ERROR, "driver has already been
    // destroyed" or "PGlite is closed", after close resolved)
    expect((await imported).sessions).toBe(5)
    await atomic
    expect(order.at(-1)).toBe('close')
    const reader = await openStore(options)
    try {
      expect((await reader.load(sessionId)).messages).toHaveLength(2)
    } finally {
      await reader.close()
      await drop()
    }
  })
})
