/**
 * `store.load(session)` through `turnlog.load_session`: one statement, rows in join order,
 * ordered by position in the store. Checks the order after history operations moved rows out of seq
 * order (on Postgres and PGlite), exact payloads, the empty and unknown session, the cache it fills,
 * the function's settings and grants, row level security, and that `load_live` (the two-statement read kept for direct SQL callers) still agrees.
 */
import { afterAll, describe, expect, it } from '@jest/globals'
import {
  contentHash,
  createMessage,
  isMessage,
  newSessionId,
  restoreMessage,
  type Message,
  type MessageId,
  type SessionId,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { openTestStore, useTestStore, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'
import pg from 'pg'
import { createLoginRole, dropLoginRoles, runSql, type LoginRole } from './security/support/security-fixtures.js'

let db: TestDatabase
let store: PostgresStore
const roles: LoginRole[] = []

useTestStore((t) => ({ db, store } = t), { pool: { max: 2 } })

afterAll(async () => {
  // after the store is closed and the database dropped (hooks run in the order they are declared)
  await dropLoginRoles(roles)
})

const user = (content: string): Message => createMessage({ role: 'user', content })
const ids = (messages: readonly Message[]): string[] => messages.map((m) => m.id)

/**
 * A session whose live rows are not in seq order: m2 revised (its current content is a later event,
 * its position unchanged) and m3, m4 compacted into a two-message summary (placed at m3's position,
 * held by later events, the rows after it shifted). Returns the expected live ids.
 */
async function historyOutOfSeqOrder(s: PostgresStore, session: SessionId): Promise<string[]> {
  const m = [user('one'), user('two'), user('three'), user('four'), user('five'), user('six')]
  await s.append(session, m)
  await s.revise(session, m[1]!.id, { role: 'user', content: 'two, revised' })
  const summary = [createMessage({ role: 'system', content: 'summary a' }), createMessage({ role: 'system', content: 'summary b' })]
  await s.compact(session, { covered: [m[2]!.id, m[3]!.id], summary })
  return [m[0]!.id, m[1]!.id, summary[0]!.id, summary[1]!.id, m[4]!.id, m[5]!.id]
}

describe('load', () => {
  it('returns the live list in position order when a revision and a compaction moved rows out of seq order', async () => {
    // given
    const session = await store.createSession()
    const expected = await historyOutOfSeqOrder(store, session)
    const rows = await runSql<{ message_id: string; position: string; event_seq: string }>(
      db.connectionString,
      'select message_id::text, position, event_seq from turnlog.live_messages where session_id = $1 order by event_seq',
      [session],
    )
    expect(rows.map((r) => r.message_id)).not.toEqual(expected) // seq order is not the live order here

    // when: a store with an empty cache
    const other = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 1 } })
    const loaded = await other.load(session)
    const folded = await other.load(session, { at: loaded.version })
    await other.close()

    // then
    expect(ids(loaded.messages)).toEqual(expected)
    expect(loaded.messages).toEqual(folded.messages)
    expect(loaded.messages[1]?.payload).toEqual({ role: 'user', content: 'two, revised' })
    expect(loaded.version).toBe(folded.version)
  })

  it('returns every payload exactly: NUL, lone surrogates, astral characters, key order, odd keys', async () => {
    // given
    const session = await store.createSession()
    const weird = createMessage({
      zeta: 1,
      role: 'user',
      content: 'a\u0000b\ud800c\udfffd😀',
      alpha: { '': [null, 1.5, '\u0000'], __proto__x: true },
    })
    const tool = createMessage({ role: 'tool', tool_call_id: 'call\u0000\ud800', content: '\\u0000 is not NUL' })
    await store.append(session, [weird, tool])

    // when
    const other = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 1 } })
    const { messages } = await other.load(session)
    await other.close()

    // then
    expect(messages.map((m) => JSON.stringify(m.payload))).toEqual([JSON.stringify(weird.payload), JSON.stringify(tool.payload)])
    expect(messages.map((m) => contentHash(m))).toEqual([contentHash(weird), contentHash(tool)])
    expect(messages.map((m) => m.createdAt)).toEqual([weird.createdAt, tool.createdAt])
  })

  it('gives frozen Messages, partial status and externalId kept, and teaches the flush cache: a flush of them writes nothing', async () => {
    // given
    const session = await store.createSession()
    const inbound = createMessage({ role: 'user', content: 'hi' }, { externalId: 'chat:42', scope: null })
    const streaming = createMessage({ role: 'assistant', content: 'hel' }, { status: 'partial' })
    await store.append(session, [inbound, streaming])
    const other = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 1 } })

    // when
    const loaded = await other.load(session)
    const flushed = await other.flush(session, loaded.messages)
    await other.close()

    // then
    expect(loaded.messages.every((m) => isMessage(m) && Object.isFrozen(m) && Object.isFrozen(m.payload))).toBe(true)
    expect(loaded.messages.map((m) => [m.externalId, m.status])).toEqual([
      ['chat:42', undefined],
      [undefined, 'partial'],
    ])
    expect(flushed).toEqual({ version: loaded.version, appended: [], duplicates: ids(loaded.messages) })
  })

  it('loads an empty session with its version, and refuses an unknown one with SESSION_NOT_FOUND', async () => {
    // given
    const empty = await store.createSession()
    const unknown = newSessionId()

    // when / then
    await expect(store.load(empty)).resolves.toMatchObject({ sessionId: empty, version: 0, messages: [], pairing: { ok: true } })
    await expect(store.load(unknown)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  it('loads at a version past the first page of events (500) like the fold of every event up to it, and refuses a version beyond the head', async () => {
    // given: 1202 events (1200 appends, a revision, a rewind)
    const session = await store.createSession()
    const messages = Array.from({ length: 1200 }, (_, i) => user(`m${i}`))
    for (let i = 0; i < messages.length; i += 400) await store.append(session, messages.slice(i, i + 400))
    await store.revise(session, messages[3]!.id, { role: 'user', content: 'm3, revised' })
    await store.rewind(session, { from: messages[1100]!.id })

    // when
    const atPageEdge = await store.load(session, { at: 500 })
    const atRevision = await store.load(session, { at: 1201 })
    const atHead = await store.load(session, { at: 1202 })

    // then
    expect(ids(atPageEdge.messages)).toEqual(ids(messages.slice(0, 500)))
    expect(atRevision.version).toBe(1201)
    expect(ids(atRevision.messages)).toEqual(ids(messages))
    expect(atRevision.messages[3]?.payload).toEqual({ role: 'user', content: 'm3, revised' })
    expect(atHead.messages).toEqual((await store.load(session)).messages)
    expect(ids(atHead.messages)).toHaveLength(1100)
    await expect(store.load(session, { at: 1203 })).rejects.toMatchObject({ code: 'INVALID_INPUT', details: { at: 1203, version: 1202 } })
    await expect(store.load(newSessionId(), { at: 0 })).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  it('agrees with load_live of 0001, kept for stores of earlier releases', async () => {
    // given
    const session = await store.createSession()
    const expected = await historyOutOfSeqOrder(store, session)

    // when
    const rows = await runSql<{ version: string; message_id: string }>(
      db.connectionString,
      'select version, message_id::text from turnlog.load_live($1)',
      [session],
    )

    // then
    expect(rows.map((r) => r.message_id)).toEqual(expected)
    expect(Number(rows[0]?.version)).toBe((await store.load(session)).version)
  })
})

describe('turnlog.load_session', () => {
  it('runs as the caller, without JIT or parallel workers, for the writer and the reader only', async () => {
    // when
    const [fn] = await runSql<{ prosecdef: boolean; proconfig: string[]; writer: boolean; reader: boolean; public_can: boolean }>(
      db.connectionString,
      `
      select p.prosecdef, p.proconfig,
             has_function_privilege('turnlog_writer', p.oid, 'execute') as writer,
             has_function_privilege('turnlog_reader', p.oid, 'execute') as reader,
             exists (select 1 from aclexplode(p.proacl) a where a.grantee = 0 and a.privilege_type = 'EXECUTE') as public_can
        from pg_proc p where p.oid = 'turnlog.load_session(uuid)'::regprocedure`,
    )

    // then
    expect(fn).toEqual({
      prosecdef: false,
      proconfig: ['jit=off', 'max_parallel_workers_per_gather=0'],
      writer: true,
      reader: true,
      public_can: false,
    })
  })

  it('lets a tenant reader load its own sessions and no other tenant’s', async () => {
    // given: a session of tenant a and one of tenant b
    const reader = await createLoginRole(db, 'ld_ra', { groups: ['turnlog_reader'], tenant: 'tenant-a' })
    roles.push(reader)
    const mine = await store.createSession({ tenantId: 'tenant-a' })
    const theirs = await store.createSession({ tenantId: 'tenant-b' })
    await store.append(mine, [user('for a')])
    await store.append(theirs, [user('for b')])
    const readerStore = await openStore({ connectionString: reader.connectionString, migrate: false, pool: { max: 1 } })

    try {
      // when / then
      await expect(readerStore.load(mine)).resolves.toMatchObject({ version: 1, messages: [{ payload: { content: 'for a' } }] })
      await expect(readerStore.load(theirs)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    } finally {
      await readerStore.close()
    }
  })
})

describe('load on PGlite', () => {
  it('orders the rows of an out-of-seq-order history like the fold', async () => {
    // given
    const { store: embedded, close: closeEmbedded } = await openTestStore('pglite')
    try {
      const session = await embedded.createSession()
      const expected = await historyOutOfSeqOrder(embedded, session)

      // when
      const loaded = await embedded.load(session)

      // then
      expect(ids(loaded.messages)).toEqual(expected)
      expect(loaded.messages).toEqual((await embedded.load(session, { at: loaded.version })).messages)
    } finally {
      await closeEmbedded()
    }
  })
})

describe('load with directConnection: a named prepared statement', () => {
  it("uses the prepared statement on a connection that runs without JIT and parallel workers, keeping the caller's options", async () => {
    // given a store with its own one-connection pool and an option of the caller's
    const own = await openStore({
      connectionString: db.connectionString,
      migrate: false,
      directConnection: true,
      pool: { max: 1, options: '-c statement_timeout=4321' },
    })
    try {
      const session = await own.createSession()
      await own.append(session, [user('prepared')])
      // when
      await own.load(session)
      // then (the one connection: the prepared statement and the settings are its own)
      const { rows } = await sql<{ name: string; jit: string; workers: string; timeout: string }>`
        select (select string_agg(name, ',' order by name) from pg_prepared_statements) as name, current_setting('jit') as jit,
               current_setting('max_parallel_workers_per_gather') as workers, current_setting('statement_timeout') as timeout`.execute(
        own.db,
      )
      expect(rows[0]).toEqual({ name: 'turnlog_append_messages_1,turnlog_load_session_2', jit: 'off', workers: '0', timeout: '4321ms' })
    } finally {
      await own.close()
    }
    // and without it (the default: a pooler may sit in between) nothing is prepared nor set
    const plain = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 1 } })
    try {
      const session = await plain.createSession()
      await plain.append(session, [user('unnamed')])
      await plain.load(session)
      const { rows } = await sql<{ n: string; workers: string }>`
        select (select count(*) from pg_prepared_statements) as n, current_setting('max_parallel_workers_per_gather') as workers`.execute(
        plain.db,
      )
      const [server] = await runSql<{ workers: string }>(
        db.connectionString,
        "select current_setting('max_parallel_workers_per_gather') as workers",
      )
      expect(rows[0]).toEqual({ n: '0', workers: server?.workers })
    } finally {
      await plain.close()
    }
  })

  it('falls back to unnamed statements for good when a prepared statement goes missing (a transaction-mode pooler)', async () => {
    // given a direct store whose one connection has prepared its statements
    const own = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true, pool: { max: 1 } })
    try {
      const session = await own.createSession()
      await own.append(session, [user('first')])
      await own.load(session)
      // when the server forgets them (as when a pooler hands the next call another server connection)
      await sql`deallocate all`.execute(own.db)
      const appended = await own.append(session, [user('second')])
      const loaded = await own.load(session)
      // then both calls still succeed, once each, and nothing is prepared again
      expect(appended.version).toBe(2)
      expect(loaded.messages.map((m) => m.payload.content)).toEqual(['first', 'second'])
      await own.append(session, [user('third')])
      const { rows } = await sql<{ n: string }>`select count(*) as n from pg_prepared_statements`.execute(own.db)
      expect(rows[0]?.n).toBe('0')
      expect((await own.load(session)).version).toBe(3)
    } finally {
      await own.close()
    }
  })

  it('gives what the function gives, on a history that moved rows out of seq order, every time (custom and generic plans)', async () => {
    // given the same session read by the prepared statement (own pool) and by load_session (a caller's pool)
    const session = await store.createSession()
    const expected = await historyOutOfSeqOrder(store, session)
    const callers = new pg.Pool({ connectionString: db.connectionString, max: 1 })
    const viaFunction = await openStore({ pool: callers, migrate: false })
    const own = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true, pool: { max: 1 } })
    try {
      const reference = await viaFunction.load(session)
      expect(ids(reference.messages)).toEqual(expected)
      // when loaded more than five times (after five custom plans a prepared statement may go generic)
      for (let i = 0; i < 8; i++) {
        const loaded = await own.load(session)
        // then
        expect(loaded.version).toBe(reference.version)
        expect(loaded.messages.map((m) => [m.id, m.payload, m.createdAt, m.status])).toEqual(
          reference.messages.map((m) => [m.id, m.payload, m.createdAt, m.status]),
        )
        expect(loaded.messages.map((m) => contentHash(m))).toEqual(reference.messages.map((m) => contentHash(m)))
      }
      await expect(own.load(newSessionId())).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    } finally {
      await own.close()
      await viaFunction.close()
      await callers.end()
    }
  })

  it("reads every message's data as the function does: the common {createdAt} text without a parse, any other text parsed", async () => {
    // given: a store's messages with every attribute, and rows a raw writer put in with data texts of the
    // common length that are not the common row (a quote or an escape inside, spaces, another key)
    const session = await store.createSession()
    const at = '2026-03-04T05:06:07.089Z'
    await store.append(session, [
      createMessage({ role: 'user', content: 'plain' }, { createdAt: at }),
      createMessage({ role: 'user', content: 'external' }, { createdAt: at, externalId: 'slack:1', scope: 'slack:C1' }),
      createMessage({ role: 'assistant', content: 'partial' }, { createdAt: at, status: 'partial', meta: { model: 'm' } }),
      createMessage({ role: 'user', content: [{ type: 'text', text: 'hi' }] }, { format: 'anthropic', createdAt: at }),
    ])
    const dataTexts = [
      '{"createdAt":"2026-01-01T00:00","a":"b"}', // 40 characters, a second key after a quote
      '{"createdAt":"2026-01-01T00:00:0\\u0030"}', // 40 characters, an escape: "…00:00:00"
      '{"createdAt":"2026-01-01T00:00:00.0\\"Z"}', // 40 characters, an escaped quote
      '{"createdAt": "2026-01-01T00:00:00.000Z"}', // a space: 41 characters
      '{"createdAt":"+010000-01-01T00:00:00.000Z"}', // a year past 9999
    ]
    const raw = new pg.Client({ connectionString: db.connectionString })
    await raw.connect()
    try {
      for (const [i, data] of dataTexts.entries()) {
        expect(data.length === 40).toBe(i < 3)
        const payload = { role: 'user' as const, content: `raw ${i}` }
        await raw.query(
          `insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
           values ($1, $2, gen_random_uuid(), 'message_appended', $3, decode($4, 'hex'), $5::json, $6::json)`,
          [session, 5 + i, createMessage(payload).id, contentHash({ payload }), JSON.stringify(payload), data],
        )
      }
    } finally {
      await raw.end()
    }
    const callers = new pg.Pool({ connectionString: db.connectionString, max: 1 })
    const viaFunction = await openStore({ pool: callers, migrate: false })
    const own = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true, pool: { max: 1 } })
    try {
      // when
      const reference = await viaFunction.load(session)
      const loaded = await own.load(session)

      // then: the same messages, attribute for attribute; the raw rows' createdAt as JSON reads them
      const full = (messages: readonly Message[]): unknown[] =>
        messages.map((m) => [m.id, m.payload, m.createdAt, m.status, m.externalId, m.externalScope, m.format, m.meta, contentHash(m)])
      expect(full(loaded.messages)).toEqual(full(reference.messages))
      expect(loaded.messages.map((m) => m.createdAt)).toEqual([
        at,
        at,
        at,
        at,
        ...dataTexts.map((text) => (JSON.parse(text) as { createdAt: string }).createdAt),
      ])
      expect(loaded.messages[1]).toMatchObject({ externalId: 'slack:1', externalScope: 'slack:C1' })
      expect(loaded.messages[2]).toMatchObject({ status: 'partial', meta: { model: 'm' } })
      expect(loaded.messages[3]?.format).toBe('anthropic')
      expect(loaded.messages[5]?.createdAt).toBe('2026-01-01T00:00:00')
    } finally {
      await own.close()
      await viaFunction.close()
      await callers.end()
    }
  })
})

describe('restoreMessage', () => {
  it('deep-freezes a payload with shared and cyclic parts and a frozen top level, and terminates', () => {
    // given
    const shared = { type: 'text', text: 'x' }
    const cyclic: Record<string, unknown> = { name: 'loop' }
    cyclic['self'] = cyclic
    const payload = Object.freeze({ role: 'user', content: [shared, shared], extra: cyclic })

    // when
    const m = restoreMessage({ id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd' as MessageId, payload, createdAt: '2026-01-01T00:00:00Z' })

    // then
    expect(m.payload).toBe(payload)
    expect([payload.content, shared, cyclic].every((part) => Object.isFrozen(part))).toBe(true)
  })
})
