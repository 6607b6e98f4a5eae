/**
 * Timeouts are typed and bounded: an exhausted pool and a statement stuck behind a lock both end in
 * `DB_TIMEOUT` (cause kept), within the configured time, never a hang, and write nothing.
 */
import { describe, expect, it } from '@jest/globals'
import pg from 'pg'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { rejection, type TestDatabase, useTestStore } from '@turnlog/testing'
import { appendCounts, expectCode, sleep } from './support/fault-helpers.js'

let db: TestDatabase
let direct: PostgresStore

useTestStore((t) => ({ db, store: direct } = t))

const user = (content: string): Message => createMessage({ role: 'user', content })

/** Measures how long a rejected call took. */
async function timed(call: () => Promise<unknown>): Promise<{ error: unknown; ms: number }> {
  const started = performance.now()
  const error = await rejection(call())
  return { error, ms: performance.now() - started }
}

/** Holds the session row's lock from another connection until `release()` is called. */
async function lockSession(session: SessionId): Promise<{ release(): Promise<void> }> {
  const client = new pg.Client({ connectionString: db.connectionString })
  client.on('error', () => {})
  await client.connect()
  await client.query('begin')
  await client.query('select version from turnlog.sessions where session_id = $1 for update', [session])
  return {
    async release() {
      await client.query('rollback')
      await client.end()
    },
  }
}

describe('pool exhaustion', () => {
  it('a call that cannot get a connection fails with DB_TIMEOUT after connectionTimeoutMillis, and writes nothing', async () => {
    // given: a pool of one connection, held by someone else
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 1, connectionTimeoutMillis: 300 } })
    const session = await store.createSession()
    let release!: () => void
    const held = store.db.connection().execute(() => new Promise<void>((resolve) => (release = resolve)))
    try {
      // when
      const write = await timed(() => store.append(session, [user('q0')]))
      const read = await timed(() => store.load(session))
      // then
      for (const { error, ms } of [write, read]) {
        const e = expectCode(error, 'DB_TIMEOUT')
        expect((e.cause as Error).message).toBe('timeout exceeded when trying to connect')
        expect(ms).toBeGreaterThanOrEqual(250)
        expect(ms).toBeLessThan(3_000)
      }
      expect((await direct.getSession(session)).version).toBe(0)
    } finally {
      release()
      await held
    }
    // and the store recovers once the connection is back
    expect((await store.append(session, [user('q1')])).version).toBe(1)
    await store.close()
  })
})

describe('statement timeout behind a held lock', () => {
  it.each([
    ['pool.statement_timeout', { statement_timeout: 300 }],
    ["pool.options '-c statement_timeout=300'", { options: '-c statement_timeout=300' }],
  ])('%s: an append blocked on the session lock fails with DB_TIMEOUT (SQLSTATE 57014) and writes nothing', async (_name, pool) => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool })
    const session = await direct.createSession()
    await direct.append(session, [user('q0')])
    const lock = await lockSession(session)
    try {
      // when
      const { error, ms } = await timed(() => store.append(session, [user('q1'), user('q2')]))
      // then
      const e = expectCode(error, 'DB_TIMEOUT')
      expect(e.details['sqlState']).toBe('57014')
      expect((e.cause as { code?: unknown }).code).toBe('57014')
      expect(ms).toBeGreaterThanOrEqual(250)
      expect(ms).toBeLessThan(3_000)
    } finally {
      await lock.release()
    }
    expect((await direct.getSession(session)).version).toBe(1)
    expect([...(await appendCounts(direct, session)).values()]).toEqual([1])
    // the same connection pool is healthy afterwards
    expect((await store.append(session, [user('q3')])).version).toBe(2)
    await store.close()
  })

  it('an explicit transaction (rewind) blocked on the lock fails with DB_TIMEOUT and leaves the live list as it was', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { statement_timeout: 300 } })
    const keep = user('q0')
    const session = await direct.createSession()
    await direct.append(session, [keep, user('q1')])
    const lock = await lockSession(session)
    try {
      // when
      const { error } = await timed(() => store.rewind(session, { after: keep.id }))
      // then
      expect(expectCode(error, 'DB_TIMEOUT').details['sqlState']).toBe('57014')
    } finally {
      await lock.release()
    }
    expect((await direct.load(session)).messages).toHaveLength(2)
    expect((await store.rewind(session, { after: keep.id })).retracted).toHaveLength(1)
    await store.close()
  })

  it('a client-side query_timeout (node-postgres "Query read timeout") is DB_TIMEOUT too; the statement may still land, so the retry must be idempotent', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { query_timeout: 300 } })
    const session = await direct.createSession()
    const message = user('q0')
    const lock = await lockSession(session)
    try {
      // when
      const { error, ms } = await timed(() => store.append(session, [message]))
      // then
      expect((expectCode(error, 'DB_TIMEOUT').cause as Error).message).toBe('Query read timeout')
      expect(ms).toBeLessThan(3_000)
    } finally {
      await lock.release()
    }
    // the server kept the statement and ran it once the lock was free: the client was only told "timeout"
    for (let i = 0; i < 100 && (await direct.getSession(session)).version === 0; i++) await sleep(20)
    expect((await direct.getSession(session)).version).toBe(1)
    expect(await store.append(session, [message])).toEqual({ version: 1, appended: [], duplicates: [message.id] })
    await store.close()
  })

  it('lock_timeout (SQLSTATE 55P03, lock_not_available) is DB_TRANSIENT: retrying later may succeed', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, pool: { options: '-c lock_timeout=200' } })
    const session = await direct.createSession()
    const lock = await lockSession(session)
    try {
      // when
      const { error } = await timed(() => store.append(session, [user('q0')]))
      // then
      expect(expectCode(error, 'DB_TRANSIENT').details['sqlState']).toBe('55P03')
    } finally {
      await lock.release()
    }
    expect((await store.append(session, [user('q0')])).appended).toHaveLength(1)
    await store.close()
  })
})
