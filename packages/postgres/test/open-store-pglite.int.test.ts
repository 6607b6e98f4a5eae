/**
 * `openStore({ pglite })`: a store on the caller's PGlite instance. It migrates that database, is an
 * embedded store (`flavor` 'pglite', in-process subscriptions), and `close()` leaves the instance open
 * for the caller, whose own statements see turnlog's tables. One way to reach the database: `pglite`
 * beside `embedded`, `kysely` or `connectionString` is refused, and so is a value that is not a PGlite.
 */
import { PGlite } from '@electric-sql/pglite'
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type TurnlogError } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { openMigratedPGlite } from '@turnlog/testing'

async function rejection(p: Promise<unknown>): Promise<TurnlogError> {
  try {
    await p
  } catch (error) {
    if (isTurnlogError(error)) return error
    throw error
  }
  throw new Error('expected a rejection')
}

describe('openStore({ pglite })', () => {
  it("migrates the caller's instance, serves the store on it, and close() leaves it open", async () => {
    // given a PGlite the caller made and did not wait for
    const pglite = new PGlite()
    try {
      // when a store opens on it, writes and closes
      const store = await openStore({ pglite })
      expect(store.flavor).toBe('pglite')
      const session = await store.createSession()
      const messages = [createMessage({ role: 'user', content: 'hi' }), createMessage({ role: 'assistant', content: 'hello' })]
      await store.append(session, messages)
      expect((await store.load(session)).messages.map((m) => m.id)).toEqual(messages.map((m) => m.id))
      await store.close()
      // then the instance is still open, and the caller's own statements see what the store wrote
      const { rows } = await pglite.query<{ n: number }>('select count(*)::int as n from turnlog.events where session_id = $1', [session])
      expect(rows[0]?.n).toBe(2)
      // and a second store on the same instance finds the schema migrated and the session there
      const again = await openStore({ pglite })
      expect((await again.load(session)).messages.map((m) => m.id)).toEqual(messages.map((m) => m.id))
      await again.close()
    } finally {
      await pglite.close()
    }
  })

  it('delivers to an in-process subscription, as an embedded store does', async () => {
    const pglite = await openMigratedPGlite()
    try {
      const store = await openStore({ pglite })
      const session = await store.createSession()
      await store.append(session, [createMessage({ role: 'user', content: 'hi' })])
      const seen: string[] = []
      const sub = store.subscribe({ name: 'byo' }, (event) => void seen.push(event.type), { pollIntervalMs: 20 })
      await sub.catchUp()
      // one consumer per name, held in this process (an embedded store has no advisory-lock connection)
      const second = store.subscribe({ name: 'byo' }, () => {}, { waitForLock: false })
      await expect(second.done).rejects.toMatchObject({ code: 'SUBSCRIPTION_LOCKED' })
      await sub.stop()
      await store.close()
      expect(seen).toContain('message_appended')
    } finally {
      await pglite.close()
    }
  })

  it('is one way to reach the database: beside another, or not a PGlite, it is INVALID_INPUT naming the field, before any statement', async () => {
    const pglite = await PGlite.create()
    try {
      const both = await rejection(openStore({ embedded: true, pglite } as never))
      expect(both).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'config.pglite' } })
      const withUrl = await rejection(openStore({ pglite, connectionString: 'postgresql://127.0.0.1:1/x' } as never))
      expect(withUrl).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'config.connectionString' } })
      const notOne = await rejection(openStore({ pglite: { query: () => undefined } } as never))
      expect(notOne).toMatchObject({ code: 'INVALID_INPUT', details: { field: 'config.pglite' } })
      // nothing ran on the instance: no turnlog schema was made
      const { rows } = await pglite.query<{ n: number }>("select count(*)::int as n from pg_namespace where nspname = 'turnlog'")
      expect(rows[0]?.n).toBe(0)
    } finally {
      await pglite.close()
    }
  })
})
