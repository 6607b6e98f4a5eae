/**
 * docs/errors.md, the promises no other test pinned down on a real server (an audit of the document,
 * promise by promise). custom-sqlstates.test.ts pins the SQLSTATE table to the SQL's text and maps
 * made-up driver errors; here the SQL itself raises each of turnlog's own states in the situation the
 * table names, and the caller gets the code with `details.sqlState` (or the evidence the store adds)
 * and the driver error as `cause`, never `DB_ERROR`. Also the codes whose `cause` is a server error:
 * `DB_ERROR` (`details.sqlState`), `PERMISSION_DENIED` (42501), and `STORE_CLOSED`.
 *
 * Elsewhere: `TLC02` (importEvents, packages/audit/test/import-batches.int.test.ts), `TLP01` (callers
 * never see it: append-without-content.int.test.ts), `MIGRATION_FAILED` (operations-promises.int.test.ts,
 * migrate-failure.test.ts, packages/cli/test/migrate-roles.int.test.ts).
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type TurnlogError } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, useTestStore, type TestDatabase, turnlogRejection } from '@turnlog/testing'
import pg from 'pg'

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

const user = (content: string): Message => createMessage({ role: 'user', content })
const NO_SESSION = '0190c5e2-7b1c-7a33-9f00-1234567890ab'

/** The SQLSTATE of an error's cause (the driver error). */
const causeState = (e: TurnlogError): unknown => (e.cause as { code?: unknown } | undefined)?.code

/** Runs SQL as the test server's superuser on the suite's database. */
async function superuser<T>(fn: (client: pg.Client) => Promise<T>, connectionString = db.connectionString): Promise<T> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

describe("turnlog's own SQLSTATEs, raised by the SQL where errors.md's table says", () => {
  it('TLS01: a write or read the SQL refuses for a session that does not exist is SESSION_NOT_FOUND, details.sqlState TLS01, the driver error as cause', async () => {
    // given a session id nobody created
    // when
    const errors = [await turnlogRejection(store.append(NO_SESSION, [user('hi')])), await turnlogRejection(store.load(NO_SESSION))]
    const checkedFirst = await turnlogRejection(store.redact(NO_SESSION, createMessage({ role: 'user', content: 'x' }).id))
    // then
    for (const e of errors) {
      expect(e.code).toBe('SESSION_NOT_FOUND')
      expect(e.details['sqlState']).toBe('TLS01')
      expect(causeState(e)).toBe('TLS01')
    }
    // (redact looks the session up before its SQL runs: the same code, naming the session)
    expect(checkedFirst.code).toBe('SESSION_NOT_FOUND')
    expect(checkedFirst.details).toEqual({ sessionId: NO_SESSION })
  })

  it('TLV01: a stale expectedVersion is VERSION_CONFLICT with details.actualVersion and details.sqlState', async () => {
    // given a session at version 2
    const session = await store.createSession()
    await store.append(session, [user('one'), user('two')])
    // when
    const e = await turnlogRejection(store.append(session, [user('three')], { expectedVersion: 1 }))
    // then
    expect(e.code).toBe('VERSION_CONFLICT')
    expect(e.details).toMatchObject({ sqlState: 'TLV01', actualVersion: 2 })
    expect(causeState(e)).toBe('TLV01')
  })

  it('TLM01: an id stored with other content, or in another session, is MESSAGE_CONFLICT with the evidence in details and the driver error as cause', async () => {
    // given a message stored in one session
    const session = await store.createSession()
    const other = await store.createSession()
    const stored = user('the original')
    await store.append(session, [stored])
    // when
    const changed = await turnlogRejection(store.append(session, [{ ...stored, payload: { role: 'user', content: 'changed' } }]))
    const foreign = await turnlogRejection(store.append(other, [stored]))
    // then
    expect(changed.code).toBe('MESSAGE_CONFLICT')
    expect(changed.details).toMatchObject({ sessionId: session, messageId: stored.id, reason: 'content_mismatch' })
    expect(typeof changed.details['storedHash']).toBe('string')
    expect(typeof changed.details['incomingHash']).toBe('string')
    expect(changed.details['conflicts']).toHaveLength(1)
    expect(causeState(changed)).toBe('TLM01')
    expect(foreign.code).toBe('MESSAGE_CONFLICT')
    expect(foreign.details).toMatchObject({ messageId: stored.id, reason: 'foreign_session', otherSessionId: session })
    expect(causeState(foreign)).toBe('TLM01')
  })

  it('TLC01: a log with a missing predecessor is CORRUPT_LOG with details.sqlState TLC01, and nothing is appended', async () => {
    // given a session whose last event was deleted behind the store's back (the version still counts it)
    const session = await store.createSession()
    await store.append(session, [user('one'), user('two')])
    await superuser((c) => c.query('delete from turnlog.events where session_id = $1 and seq = 2', [session]))
    // when
    const e = await turnlogRejection(store.append(session, [user('three')]))
    // then
    expect(e.code).toBe('CORRUPT_LOG')
    expect(e.details['sqlState']).toBe('TLC01')
    expect(causeState(e)).toBe('TLC01')
    expect(e.message).toMatch(/no predecessor/)
    const rows = await superuser((c) => c.query('select seq from turnlog.events where session_id = $1 order by seq', [session]))
    expect(rows.rows.map((r: { seq: number }) => Number(r.seq))).toEqual([1])
  })

  it('TLU01: redacting a message that is not in the session is UNKNOWN_MESSAGE naming both, the driver error as cause', async () => {
    // given a session, and a message stored in another one
    const session = await store.createSession()
    await store.append(session, [user('mine')])
    const other = await store.createSession()
    const elsewhere = user('elsewhere')
    await store.append(other, [elsewhere])
    // when
    const e = await turnlogRejection(store.redact(session, elsewhere.id))
    // then
    expect(e.code).toBe('UNKNOWN_MESSAGE')
    expect(e.details).toMatchObject({ sessionId: session, messageId: elsewhere.id })
    expect(causeState(e)).toBe('TLU01')
  })
})

describe('the codes a server error becomes', () => {
  it('DB_ERROR: any other database error keeps its SQLSTATE in details.sqlState and the driver error as cause', async () => {
    // given a database without the turnlog schema
    const bare = await createTestDatabase()
    const unmigrated = await openStore({ connectionString: bare.connectionString, migrate: false })
    try {
      // when
      const e = await turnlogRejection(unmigrated.load(NO_SESSION))
      // then
      // (3F000: the turnlog schema does not exist)
      expect(e.code).toBe('DB_ERROR')
      expect(e.details['sqlState']).toBe('3F000')
      expect(causeState(e)).toBe('3F000')
      // and says what to do (a store opened with migrate: false on a database nobody migrated)
      expect(e.message).toMatch(/no turnlog schema.*turnlog migrate/)
      const created = await turnlogRejection(unmigrated.createSession())
      expect([created.code, created.details['sqlState']]).toEqual(['DB_ERROR', '42P01'])
      expect(created.message).toMatch(/relation "turnlog\.sessions" does not exist.*turnlog migrate/)
    } finally {
      await unmigrated.close()
      await bare.drop()
    }
  })

  it('PERMISSION_DENIED: a turnlog_reader login appending gets SQLSTATE 42501, in details.sqlState and as the cause', async () => {
    // given a session and a login that may only read
    const session = await store.createSession()
    await store.append(session, [user('hello')])
    const login = `errors_reader_${db.name.replace(/^turnlog_test_/, '')}`
    await superuser((c) => c.query(`create role ${login} login in role turnlog_reader`))
    const url = new URL(db.connectionString)
    url.username = login
    const reader = await openStore({ connectionString: url.href, migrate: false })
    try {
      // when
      const loaded = await reader.load(session)
      const e = await turnlogRejection(reader.append(session, [user('not allowed')]))
      // then
      expect(loaded.messages).toHaveLength(1)
      expect(e.code).toBe('PERMISSION_DENIED')
      expect(e.details['sqlState']).toBe('42501')
      expect(causeState(e)).toBe('42501')
    } finally {
      await reader.close()
      await superuser((c) => c.query(`drop role ${login}`))
    }
  })

  it('STORE_CLOSED: every call on a closed store', async () => {
    // given a store that was closed
    const closed = await openStore({ connectionString: db.connectionString, migrate: false })
    const session = await closed.createSession()
    await closed.close()
    // when
    const errors = [
      await turnlogRejection(closed.load(session)),
      await turnlogRejection(closed.append(session, [user('late')])),
      await turnlogRejection(closed.createSession()),
    ]
    // then
    for (const e of errors) expect(e.code).toBe('STORE_CLOSED')
  })
})
