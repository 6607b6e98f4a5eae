/**
 * packages/audit/README.md, the promises no other audit test pinned down (an audit of the README,
 * promise by promise), on real Postgres databases:
 *
 * - The file format: the header, session, event and end lines have exactly the keys the README lists
 *   (an event of a redacted message carries `payloadDigest` too), and the end line counts the file.
 * - "The exporter verifies the chain too (`CORRUPT_LOG` …) unless `{ verify: false }`": with
 *   `verify: false` a log whose stored link no longer checks out is exported; and "any link that
 *   differs from the file's is refused (`IMPORT_FAILED`, naming line and seq)": importing that file
 *   writes nothing.
 * - "a session with other attributes (tenant, metadata, fork lineage) is `SESSION_EXISTS`. Nothing of
 *   that session is written": metadata and fork lineage (the tenant is pinned by export-import).
 * - The export of a redacted message imports exactly through the schema owner; a `turnlog_writer` login
 *   may not write the payload digest, so its import is `PERMISSION_DENIED` and writes nothing (the
 *   README says so since this audit; reliability.md had it, the README promised any import).
 * - "Without `sessionId`, the session id is derived from the tenant and the file's content, so a
 *   re-import finds the same session": the same file under the same tenant is one session; under
 *   another tenant, or none, another.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId, type StoredEvent } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, useTestStore } from '@turnlog/testing'
import { exportSessions, importEvents, importTranscript } from '@turnlog/audit'
import { sql } from 'kysely'
import { createLoginRole, dropLoginRoles } from '../../postgres/test/security/support/security-fixtures.js'

let store: PostgresStore

useTestStore((t) => ({ store } = t))

/** Collects an export into its lines. */
async function exportLines(from: PostgresStore, selection: Parameters<typeof exportSessions>[1], verify = true): Promise<string[]> {
  const lines: string[] = []
  for await (const line of exportSessions(from, selection, { verify })) lines.push(line)
  return lines
}

/** Every event of a session, as the port shows it. */
async function eventsOf(from: PostgresStore, id: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of from.events(id)) out.push(e)
  return out
}

/** Runs `fn` with a store on a fresh database of its own, dropped afterwards. */
async function withOtherStore<T>(fn: (other: PostgresStore) => Promise<T>): Promise<T> {
  const db = await createTestDatabase()
  const other = await openStore({ connectionString: db.connectionString })
  try {
    return await fn(other)
  } finally {
    await other.close()
    await db.drop()
  }
}

describe('packages/audit/README.md, promise by promise', () => {
  it('the export file: header, session, event and end lines with exactly the documented keys; a redacted event adds payloadDigest', async () => {
    // given: a session with two messages, one of them redacted, and a fork of it
    const parent = await store.createSession({ tenantId: 'acme', metadata: { app: 'readme' } })
    const secret = createMessage({ role: 'user', content: 'my card is 4111 1111 1111 1111' })
    await store.append(parent, [secret, createMessage({ role: 'assistant', content: 'noted' })])
    await store.redact(parent, secret.id, { reason: 'pci' })
    const child = await store.fork(parent, { at: secret.id, tenantId: 'acme' })

    // when
    const lines = await exportLines(store, { sessionIds: [parent, child] })
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>)

    // then: the header
    expect(Object.keys(records[0] ?? {})).toEqual(['format', 'version', 'exportedAt'])
    expect(records[0]).toMatchObject({ format: 'turnlog-export', version: 1 })
    // the session lines, the fork's parent as { sessionId, version, at }
    const sessionKeys = ['kind', 'id', 'tenantId', 'metadata', 'createdAt', 'updatedAt', 'version', 'parent']
    const sessions = records.filter((r) => r['kind'] === 'session')
    expect(sessions.map((s) => Object.keys(s))).toEqual([sessionKeys, sessionKeys])
    expect(sessions.find((s) => s['id'] === parent)).toMatchObject({ tenantId: 'acme', metadata: { app: 'readme' }, parent: null })
    const fork = sessions.find((s) => s['id'] === child)
    expect(Object.keys(fork?.['parent'] as object)).toEqual(['sessionId', 'version', 'at'])
    expect(fork?.['parent']).toMatchObject({ sessionId: parent, at: secret.id })
    // the event lines: the documented keys, and payloadDigest only on the redacted message's events (its original append among them)
    const eventKeys = ['kind', 'sessionId', 'seq', 'eventId', 'type', 'messageId', 'contentHash', 'payload', 'data', 'recordedAt', 'hash']
    const events = records.filter((r) => r['kind'] === 'event')
    for (const e of events) {
      const digest = Object.keys(e).includes('payloadDigest')
      expect(Object.keys(e)).toEqual(digest ? [...eventKeys, 'payloadDigest'] : eventKeys)
      if (digest) expect(e['messageId']).toBe(secret.id)
    }
    expect(events.some((e) => 'payloadDigest' in e && e['sessionId'] === parent && e['type'] === 'message_appended')).toBe(true)
    // the end line counts what the file holds
    expect(records.at(-1)).toEqual({ kind: 'end', sessions: 2, events: events.length })
    expect(records.filter((r) => r['kind'] === undefined)).toHaveLength(1)
  })

  it('verify: false exports a log whose stored link no longer verifies; importing that file is IMPORT_FAILED naming line and seq, nothing written', async () => {
    // given: a session whose second payload is rewritten around the store
    const victim = await store.createSession()
    await store.append(victim, [createMessage({ role: 'user', content: 'first' })])
    await store.append(victim, [createMessage({ role: 'user', content: 'original' })])
    await sql`update turnlog.events set payload = ${JSON.stringify({ role: 'user', content: 'forged' })}::json
               where session_id = ${victim} and seq = 2`.execute(store.db)

    // when: exported with and without verification
    await expect(exportLines(store, { sessionIds: [victim] })).rejects.toMatchObject({ code: 'CORRUPT_LOG', details: { seq: 2 } })
    const lines = await exportLines(store, { sessionIds: [victim] }, false)

    // then: the file holds the forged payload; another store refuses it, naming the line and seq, and has nothing of it
    expect(lines.join('\n')).toContain('forged')
    await withOtherStore(async (other) => {
      await expect(importEvents(other, lines)).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 4, seq: 2 } })
      await expect(other.getSession(victim)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    })
  })

  it('a session whose metadata or fork lineage differs from the file is SESSION_EXISTS, nothing of it written', async () => {
    // given: a session with metadata and a fork of it, exported
    const parent = await store.createSession({ tenantId: 't1', metadata: { plan: 'pro' } })
    const first = createMessage({ role: 'user', content: 'hello' })
    await store.append(parent, [first, createMessage({ role: 'assistant', content: 'hi' })])
    const child = await store.fork(parent, { at: first.id, tenantId: 't1' })
    await store.append(child, [createMessage({ role: 'user', content: 'and then?' })])
    const parentFile = await exportLines(store, { sessionIds: [parent] })
    const childFile = await exportLines(store, { sessionIds: [child] })

    await withOtherStore(async (other) => {
      // and: the target holds the same ids, same tenant, one with other metadata, one not a fork
      await other.createSession({ id: parent, tenantId: 't1', metadata: { plan: 'free' } })
      await other.createSession({ id: child, tenantId: 't1' })
      const before = [await other.getSession(parent), await other.getSession(child)]

      // when / then
      await expect(importEvents(other, parentFile)).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
      await expect(importEvents(other, childFile)).rejects.toMatchObject({ code: 'SESSION_EXISTS' })
      expect([await other.getSession(parent), await other.getSession(child)]).toEqual(before)
      expect(await eventsOf(other, parent)).toEqual([])
      expect(await eventsOf(other, child)).toEqual([])

      // and: the control: into an empty database the same files import
      await withOtherStore(async (empty) => {
        expect(await importEvents(empty, [...parentFile])).toMatchObject({ eventsWritten: 2 })
        expect((await importEvents(empty, [...childFile])).eventsWritten).toBeGreaterThan(0)
      })
    })
  })

  it('a file with a redacted message imports through the owner; a turnlog_writer login gets PERMISSION_DENIED and nothing is written (other files it imports)', async () => {
    // given: a session with a redacted message, exported
    const session = await store.createSession()
    const secret = createMessage({ role: 'user', content: 'my password is hunter2' })
    await store.append(session, [secret, createMessage({ role: 'assistant', content: 'noted' })])
    await store.redact(session, secret.id, { reason: 'secret' })
    const file = await exportLines(store, { sessionIds: [session] })
    expect(file.some((l) => l.includes('"payloadDigest":'))).toBe(true)

    const db = await createTestDatabase()
    const owner = await openStore({ connectionString: db.connectionString })
    const login = await createLoginRole(db, 'readme_writer', { groups: ['turnlog_writer'] })
    const writer = await openStore({ connectionString: login.connectionString, pool: { max: 1 }, migrate: false })
    try {
      // when: the writer login imports it
      const refused = await importEvents(writer, file).catch((e: unknown) => e)

      // then: refused, nothing of the session written
      expect(refused).toMatchObject({ code: 'PERMISSION_DENIED' })
      await expect(owner.getSession(session)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })

      // and: the control: a file without a redaction imports through the writer login
      const plain = await store.createSession()
      await store.append(plain, [createMessage({ role: 'user', content: 'nothing secret' })])
      expect(await importEvents(writer, await exportLines(store, { sessionIds: [plain] }))).toMatchObject({ sessions: 1, eventsWritten: 1 })

      // and: the owner's import writes the redacted one exactly (the same events as the source)
      expect(await importEvents(owner, file)).toMatchObject({ sessions: 1, eventsWritten: 3 })
      expect(await eventsOf(owner, session)).toEqual(await eventsOf(store, session))
    } finally {
      await writer.close()
      await owner.close()
      await db.drop()
      await dropLoginRoles([login])
    }
  })

  it('importTranscript without sessionId: the same file and tenant is one session (a re-import is a no-op); another tenant, or none, another', async () => {
    // given
    const lines = [
      JSON.stringify({ role: 'user', content: 'ping' }),
      JSON.stringify({ role: 'assistant', content: 'pong' }),
      JSON.stringify({ role: 'user', content: 'ping' }),
    ]

    // when
    const a = await importTranscript(store, lines, { tenantId: 'tenant-a' })
    const again = await importTranscript(store, lines, { tenantId: 'tenant-a' })
    const b = await importTranscript(store, lines, { tenantId: 'tenant-b' })
    const none = await importTranscript(store, lines)

    // then: two equal messages at different positions stay two; the re-import finds the session
    expect(a).toMatchObject({ appended: 3, duplicates: 0, version: 3 })
    expect(again).toEqual({ ...a, appended: 0, duplicates: 3 })
    expect(b).toMatchObject({ appended: 3, version: 3 })
    expect(none).toMatchObject({ appended: 3, version: 3 })
    expect(new Set<SessionId>([a.sessionId, b.sessionId, none.sessionId]).size).toBe(3)
    expect((await store.getSession(b.sessionId)).tenantId).toBe('tenant-b')
    expect((await store.getSession(none.sessionId)).tenantId).toBeNull()
  })
})
