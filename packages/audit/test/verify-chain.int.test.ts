import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, newSessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, type TestDatabase, useTestStore, useTestStoreOfKind } from '@turnlog/testing'
import { verifyChain } from '@turnlog/audit'
import { WEIRD, assistant, eventIdAt, injectAppendedEvent, rawSql, seedRealisticSession, user } from './audit-fixtures.js'

/** Payloads that only a byte-exact store and hash survive. */
const hostilePayloads = [
  { role: 'user', content: 'NUL \u0000 in the middle' },
  { role: 'tool', tool_call_id: 'c\u0000x', content: 'lone high \ud83d and lone low \ude00 surrogates' },
  { role: 'assistant', content: [{ type: 'text', text: WEIRD }], reasoning_content: '\ud800', __proto__x: 1 },
  JSON.parse('{"role":"user","content":"proto key","__proto__":{"a":"\\u0000"},"10":1,"2":[-0,1e21,0.1]}') as unknown,
]

describe.each(STORE_KINDS)('verifyChain on a clean log (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('agrees with the database trigger on every link, hostile payloads included', async () => {
    // given
    const sessionId = await store.createSession()
    await store.append(
      sessionId,
      hostilePayloads.map((p) => createMessage(p as never)),
    )
    const m = createMessage({ role: 'assistant', content: 'draft \u0000' }, { status: 'partial' })
    await store.append(sessionId, [m])
    await store.revise(sessionId, m.id, { role: 'assistant', content: `final ${WEIRD}` })

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.breaks).toEqual([])
    expect(result).toMatchObject({ ok: true, sessionId, checked: 6, version: 6 })
    expect(result.headHash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('verifies a payload of another format that has a `payload` field and no role (hashed whole, as the store hashed it)', async () => {
    // given: before the fix the verifier read such a payload as a message and hashed its inner value
    const sessionId = await store.createSession()
    const m = createMessage({ payload: { step: 1 }, kind: 'event' }, { format: 'json' })
    await store.append(sessionId, [createMessage({ data: { step: 1 }, kind: 'event' }, { format: 'json' }), m])
    await store.revise(sessionId, m.id, { payload: { step: 2 }, kind: 'event' })

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.breaks).toEqual([])
    expect(result).toMatchObject({ ok: true, checked: 3 })
  })

  it('verifies a realistic session and its fork (tool calls, rewind, revision, compaction)', async () => {
    // given
    const { sessionId, forkId } = await seedRealisticSession(store)

    // when
    const main = await verifyChain(store, sessionId)
    const fork = await verifyChain(store, forkId)

    // then
    expect(main.breaks).toEqual([])
    expect(main.ok).toBe(true)
    expect(main.checked).toBe((await store.getSession(sessionId)).version)
    expect(fork.breaks).toEqual([])
    expect(fork.checked).toBe((await store.getSession(forkId)).version)
  })

  it('verifies a session and its fork after a redaction scrubbed a message in both', async () => {
    // given: the revised tool result (two content events here, one copy in the fork) is erased
    const { sessionId, forkId, live } = await seedRealisticSession(store)
    const erased = live.find((m) => m.payload.tool_call_id === 'call_05')
    if (!erased) throw new Error('fixture changed')
    const result = await store.redact(sessionId, erased.id, { reason: 'GDPR request 42' })

    // when
    const main = await verifyChain(store, sessionId)
    const fork = await verifyChain(store, forkId)

    // then
    expect(result.sessions.map((s) => [s.sessionId, s.scrubbed]).sort()).toEqual(
      [
        [sessionId, 2],
        [forkId, 1],
      ].sort(),
    )
    expect(main.breaks).toEqual([])
    expect(fork.breaks).toEqual([])
  })

  it('verifies an empty session', async () => {
    // given
    const sessionId = await store.createSession()

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result).toEqual({ ok: true, sessionId, checked: 0, version: 0, headHash: null, breaks: [] })
  })

  it('throws SESSION_NOT_FOUND for an unknown session', async () => {
    // when
    const error = await verifyChain(store, newSessionId()).catch((e: unknown) => e)

    // then
    expect(isTurnlogError(error, 'SESSION_NOT_FOUND')).toBe(true)
  })
})

describe('verifyChain on a tampered log (Postgres, raw SQL as superuser)', () => {
  let db: TestDatabase
  let store: PostgresStore

  useTestStore((t) => ({ db, store } = t))

  /** A session of `n` alternating user/assistant messages (seqs 1..n). */
  async function sessionOf(n: number): Promise<string> {
    const sessionId = await store.createSession()
    const messages = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? user(`question ${i}`) : assistant(`answer ${i}`)))
    await store.append(sessionId, messages)
    return sessionId
  }

  it('locates an UPDATE of a payload: the link and the content hash of that seq break, nothing else', async () => {
    // given
    const sessionId = await sessionOf(5)
    const eventId = await eventIdAt(db.connectionString, sessionId, 3)
    await rawSql(
      db.connectionString,
      `update turnlog.events set payload = '{"role":"user","content":"I never said that"}' where session_id = $1 and seq = 3`,
      [sessionId],
    )

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.ok).toBe(false)
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([
      [3, 'hash_mismatch'],
      [3, 'content_hash_mismatch'],
    ])
    expect(result.breaks[0]?.eventId).toBe(eventId)
    expect(result.breaks[1]?.explanation).toContain('content was changed')
  })

  it("locates an UPDATE of an event's data (its createdAt): only the link breaks", async () => {
    // given
    const sessionId = await sessionOf(4)
    await rawSql(
      db.connectionString,
      `update turnlog.events set data = '{"createdAt":"1999-01-01T00:00:00.000Z"}' where session_id = $1 and seq = 2`,
      [sessionId],
    )

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'hash_mismatch']])
  })

  it("locates a rewrite that also recomputed the row's hash: the next link breaks", async () => {
    // given: the tamperer rewrites seq 2 and recomputes its hash with the database's own function
    const sessionId = await sessionOf(4)
    await rawSql(
      db.connectionString,
      `
      update turnlog.events e set payload = '{"role":"assistant","content":"forged"}',
             content_hash = sha256(convert_to('{"content":"forged","role":"assistant"}', 'UTF8'))
       where session_id = $1 and seq = 2`,
      [sessionId],
    )
    await rawSql(
      db.connectionString,
      `
      update turnlog.events e set hash = turnlog.chain_link(p.hash, e.session_id, e.seq, e.event_id, e.type, e.message_id, e.content_hash, e.data, e.payload, e.payload_digest)
        from turnlog.events p where p.session_id = e.session_id and p.seq = e.seq - 1 and e.session_id = $1 and e.seq = 2`,
      [sessionId],
    )

    // when
    const result = await verifyChain(store, sessionId)

    // then: seq 2 is self-consistent now, but seq 3 was chained from its old hash
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[3, 'hash_mismatch']])
  })

  it('locates a DELETE in the middle as a seq gap', async () => {
    // given
    const sessionId = await sessionOf(6)
    await rawSql(db.connectionString, 'delete from turnlog.events where session_id = $1 and seq = 4', [sessionId])

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.breaks).toHaveLength(1)
    expect(result.breaks[0]).toMatchObject({ seq: 5, kind: 'seq_gap', expected: 4, actual: 5 })
    expect(result.breaks[0]?.explanation).toContain('seq 4 is missing')
    expect(result.checked).toBe(5)
  })

  it('reports a DELETE of the first event as a missing genesis', async () => {
    // given
    const sessionId = await sessionOf(3)
    await rawSql(db.connectionString, 'delete from turnlog.events where session_id = $1 and seq = 1', [sessionId])

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'missing_genesis']])
  })

  it('reports a DELETE of the last event as a truncated log', async () => {
    // given
    const sessionId = await sessionOf(5)
    await rawSql(db.connectionString, 'delete from turnlog.events where session_id = $1 and seq = 5', [sessionId])

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.breaks).toEqual([expect.objectContaining({ seq: 5, eventId: null, kind: 'truncated', expected: 5, actual: 4 })])
    expect(result.version).toBe(5)
  })

  it('catches a forged redaction: a payload scrubbed by hand with its digest written, so the link still verifies', async () => {
    // given: the superuser replaces seq 2's content by a placeholder and stores the digest the chain needs
    const sessionId = await sessionOf(3)
    await rawSql(
      db.connectionString,
      `
      update turnlog.events set payload = '{"role":"assistant","content":"[redacted]"}', payload_digest = sha256(convert_to(payload::text, 'UTF8'))
       where session_id = $1 and seq = 2`,
      [sessionId],
    )

    // when
    const result = await verifyChain(store, sessionId)

    // then: no message_redacted event records it
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'redaction_mismatch']])
  })

  it('catches an undone redaction: the record names an event that holds content again', async () => {
    // given: a redaction, then the digest is cleared and content put back
    const sessionId = await sessionOf(3)
    const [row] = await rawSql<{ message_id: string }>(
      db.connectionString,
      'select message_id::text from turnlog.events where session_id = $1 and seq = 2',
      [sessionId],
    )
    await store.redact(sessionId, row?.message_id ?? '')
    await rawSql(
      db.connectionString,
      `update turnlog.events set payload = '{"role":"assistant","content":"answer 1","finish_reason":"stop"}', payload_digest = null where session_id = $1 and seq = 2`,
      [sessionId],
    )

    // when
    const result = await verifyChain(store, sessionId)

    // then: the record at seq 4 no longer matches; seq 2 hashes as the original again, so its link holds
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[4, 'redaction_mismatch']])
  })

  it('refuses an event written around the store whose JSON text is not JSON.stringify output', async () => {
    // given: json_build_object writes "a" : 1 — the trigger hashed that text, JSON.stringify writes "a":1
    const sessionId = await sessionOf(2)
    await rawSql(
      db.connectionString,
      `
      insert into turnlog.events (session_id, seq, event_id, type, data)
      values ($1, 3, gen_random_uuid(), 'messages_retracted', json_build_object('ids', json_build_array(), 'target', json_build_object('after', gen_random_uuid())))`,
      [sessionId],
    )
    await rawSql(db.connectionString, 'update turnlog.sessions set version = 3 where session_id = $1', [sessionId])
    const [row] = await rawSql<{ data: string }>(
      db.connectionString,
      'select data::text as data from turnlog.events where session_id = $1 and seq = 3',
      [sessionId],
    )

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(row?.data).toContain('" : ')
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[3, 'hash_mismatch']])
  })

  it('reports events inserted around the store (the version was not moved) as a version mismatch', async () => {
    // given: a raw INSERT goes through the trigger, so its link is valid; only the version gives it away
    const sessionId = await sessionOf(2)
    await injectAppendedEvent(db.connectionString, sessionId, 3, 'user')

    // when
    const result = await verifyChain(store, sessionId)

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind, b.expected, b.actual])).toEqual([[3, 'version_mismatch', 2, 3]])
  })
})
