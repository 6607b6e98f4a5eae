import { describe, expect, it } from '@jest/globals'
import { audit, exportSessions, verifyChain } from '@turnlog/audit'
import {
  createMessage,
  foldSession,
  isTurnlogError,
  newSessionId,
  placeholderDigest,
  redactedPayload,
  toWire,
  transcriptOf,
  type Message,
  type SessionId,
  type StoredEvent,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { openTestStore, type TestDatabase } from '@turnlog/testing'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'
import { useTestBed } from '../support/use-test-bed.js'

const SECRET = 'DE89-3704-SECRET'

let db: TestDatabase
let admin: PostgresStore, store: PostgresStore
let role: LoginRole

// the conversation: S, a fork C taken before the redaction, a fork D taken after it
let S: SessionId, C: SessionId, D: SessionId
let system: Message, question: Message, call: Message, result: Message, done: Message
let versionBeforeRedaction: number
let hashesBefore: Map<number, string | null>

useTestBed(async (bed) => {
  db = bed.db
  admin = await bed.admin()
  role = await bed.role('red', { groups: ['turnlog_writer'], tenant: 'gdpr' })
  store = await bed.open(role.connectionString)

  S = await store.createSession({ tenantId: 'gdpr' })
  system = createMessage({ role: 'system', content: 'You are a bank assistant.' })
  question = createMessage({ role: 'user', content: `my IBAN is ${SECRET}`, name: 'Alice Example' })
  call = createMessage({
    role: 'assistant',
    content: null,
    reasoning_content: `the user gave ${SECRET}`,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_iban', arguments: JSON.stringify({ iban: SECRET }) } }],
  })
  result = createMessage({ role: 'tool', tool_call_id: 'call_1', content: `{"iban":"${SECRET}","balance":12}` })
  done = createMessage({ role: 'assistant', content: 'Your balance is 12.' })
  await store.append(S, [system, question, call, result, done])
  // a second content version of the question, and a refused conflicting write of it (evidence)
  await store.revise(S, question.id, { role: 'user', content: `my IBAN is ${SECRET}, and my PIN is 1234-${SECRET}` })
  const clash = createMessage({ role: 'user', content: `conflicting ${SECRET}` }, { id: question.id })
  await expect(store.append(S, [clash])).rejects.toMatchObject({ code: 'MESSAGE_CONFLICT' })
  C = await store.fork(S, { at: result.id })

  hashesBefore = new Map((await events(S)).map((e) => [e.seq, e.contentHash]))
  versionBeforeRedaction = (await store.getSession(S)).version
  for (const m of [question, call, result]) await store.redact(S, m.id, { reason: 'GDPR art. 17 request #42' })
  D = await store.fork(S, { at: done.id })
})

async function events(sid: SessionId): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(sid)) out.push(e)
  return out
}

async function collect(it: AsyncIterable<string>): Promise<string> {
  const out: string[] = []
  for await (const line of it) out.push(line)
  return out.join('\n')
}

const expectNoSecret = (value: unknown): void => {
  expect(JSON.stringify(value)).not.toContain(SECRET)
  expect(JSON.stringify(value)).not.toContain('Alice')
}

describe('store.redact', () => {
  it('shows the placeholder in the live list, keeping roles and tool-call pairing', async () => {
    // given the redacted session
    // when loading it
    const loaded = await store.load(S)
    // then
    expect(loaded.messages.map((m) => m.payload)).toEqual([
      system.payload,
      { role: 'user', content: '[redacted]' },
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup_iban', arguments: '{}' } }],
      },
      { role: 'tool', content: '[redacted]', tool_call_id: 'call_1' },
      done.payload,
    ])
    expect(loaded.messages.map((m) => m.id)).toEqual([system.id, question.id, call.id, result.id, done.id])
    expect(loaded.pairing.unanswered).toEqual([])
    expect(loaded.pairing.orphans).toEqual([])
    expect(redactedPayload(call.payload)).toEqual(loaded.messages[2]?.payload)
  })

  it('never returns the content from any view: load at, state, transcript, events, export, toWire, conflicts', async () => {
    // given the session, its fork taken before and the one taken after the redaction
    for (const sid of [S, C, D]) {
      // when reading it every way there is
      const views = [
        await store.load(sid),
        await store.load(sid, { at: 2 }),
        await store.state(sid),
        await store.transcript(sid),
        await events(sid),
        await collect(exportSessions(store, { sessionIds: [sid] })),
        toWire((await store.load(sid)).messages),
        toWire((await store.load(sid)).messages, { repairPairing: true }),
        await store.conflicts(sid),
      ]
      // then the secret appears nowhere
      for (const v of views) expectNoSecret(v)
    }
    expectNoSecret(await store.load(S, { at: versionBeforeRedaction }))
    const conflicts = await store.conflicts(S)
    expect(conflicts.map((c) => c.incomingPayload)).toEqual([{ role: 'user', content: '[redacted]' }])
  })

  it('leaves no copy in any row of the database', async () => {
    // given the database as the superuser sees it
    // when searching every payload column for the secret
    const rows = await runSql<{ t: string; n: string }>(
      db.connectionString,
      `
      select 'events' as t, count(*) as n from turnlog.events where payload::text like '%' || $1 || '%' or data::text like '%' || $1 || '%'
      union all select 'conflicts', count(*) from turnlog.conflicts where incoming_payload::text like '%' || $1 || '%'`,
      [SECRET],
    )
    // then
    expect(rows.map((r) => Number(r.n))).toEqual([0, 0])
  })

  it('keeps ids, seqs and content hashes, records the digests, and every chain still verifies', async () => {
    // given the redacted log
    const log = await events(S)
    const redactions = log.filter((e) => e.type === 'message_redacted')
    const scrubbed = log.filter((e) => e.payloadDigest !== undefined)
    // when verifying every session touched
    const verifications = await Promise.all([S, C, D].map((sid) => verifyChain(store, sid)))
    // then
    for (const [seq, hash] of hashesBefore) expect(log.find((e) => e.seq === seq)?.contentHash).toBe(hash)
    expect(scrubbed.map((e) => e.seq)).toEqual([2, 3, 4, 6])
    // each record commits to the original (content hash, payload digest) and to the placeholder stored
    const record = (i: number): unknown => {
      const e = scrubbed[i]
      return { seq: e?.seq, contentHash: e?.contentHash, payloadDigest: e?.payloadDigest, placeholderDigest: placeholderDigest(e?.payload) }
    }
    expect(redactions.map((e) => e.type === 'message_redacted' && e.data)).toEqual([
      { reason: 'GDPR art. 17 request #42', scrubbed: [record(0), record(3)], origin: S },
      { reason: 'GDPR art. 17 request #42', scrubbed: [record(1)], origin: S },
      { reason: 'GDPR art. 17 request #42', scrubbed: [record(2)], origin: S },
    ])
    expect(verifications.map((v) => ({ ok: v.ok, breaks: v.breaks }))).toEqual([S, C, D].map(() => ({ ok: true, breaks: [] })))
    const reports = await Promise.all([S, C, D].map((sid) => audit(store, sid)))
    for (const r of reports)
      expect(r.findings.filter((f) => f.severity === 'critical' || f.kind.includes('chain') || f.kind.includes('tamper'))).toEqual([])
    expect((await admin.rebuild({ verify: true })).drift).toEqual([])
  })

  it('scrubs the copies in a fork taken before, which gets its own message_redacted events; a later fork copies placeholders', async () => {
    // given C (forked before) and D (forked after)
    const c = await events(C)
    const d = await events(D)
    // when looking at their logs
    // then C's copies were scrubbed with digests and recorded by redactions whose origin is S
    expect(c.filter((e) => e.payloadDigest !== undefined).map((e) => e.messageId)).toEqual([question.id, call.id, result.id])
    expect(c.filter((e) => e.type === 'message_redacted').map((e) => (e.type === 'message_redacted' ? e.data.origin : null))).toEqual([
      S,
      S,
      S,
    ])
    // and D's copies of redacted messages never held content: flagged as such, no digest needed
    const copies = d.filter((e) => e.type === 'message_appended')
    expect(copies.map((e) => (e.type === 'message_appended' ? e.data.redacted === true : null))).toEqual([false, true, true, true, false])
    expect(d.some((e) => e.payloadDigest !== undefined)).toBe(false)
  })

  it('is idempotent, and a flush of the original in-memory list writes nothing and conflicts with nothing', async () => {
    // given the redacted session at its version
    const version = (await store.getSession(S)).version
    // when redacting again and flushing the agent's list, which still holds the original contents
    const again = await store.redact(S, question.id, { reason: 'retry' })
    const fresh = await openStore({ connectionString: role.connectionString, migrate: false, pool: { max: 1 } })
    let flushed
    try {
      flushed = await fresh.flush(S, [system, question, call, result, done])
    } finally {
      await fresh.close()
    }
    // then
    expect(again.version).toBe(version)
    expect(again.sessions.map((s) => s.sessionId).sort()).toEqual([S, C, D].sort())
    expect(again.sessions.map((s) => s.scrubbed)).toEqual([0, 0, 0])
    expect(flushed.appended).toEqual([])
    expect((await store.getSession(S)).version).toBe(version)
  })

  it('links an event inserted already scrubbed (an import) over its recorded digest', async () => {
    // given the redacted log of S copied, as an importer would, into a new session (seqs kept) of
    // another tenant (in S's own tenant its message ids are S's: turnlog.message_ids, 0008)
    const copy = newSessionId()
    await runSql(
      db.connectionString,
      `
      insert into turnlog.sessions (session_id, tenant_id, version) select $2, 'copy of ' || coalesce(tenant_id, 'no tenant'), version from turnlog.sessions where session_id = $1`,
      [S, copy],
    )
    // when the rows go in with their payload_digest (data and payload texts as the store wrote them)
    await runSql(
      db.connectionString,
      `
      insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, payload_digest)
      select $2, seq, event_id, type, message_id, content_hash, payload, data, payload_digest
        from turnlog.events where session_id = $1 order by seq`,
      [S, copy],
    )
    // then the copy verifies: its scrubbed events were linked over the digests, not the placeholders
    const verification = await verifyChain(admin, copy)
    expect(verification.breaks).toEqual([])
    expect(verification.checked).toBe((await store.getSession(S)).version)
  })

  it('refuses a message the session does not hold with UNKNOWN_MESSAGE', async () => {
    // given a message of no session
    const stranger = createMessage({ role: 'user', content: 'x' })
    // when redacting it
    const error = await store.redact(S, stranger.id).catch((e: unknown) => e)
    // then
    expect(isTurnlogError(error, 'UNKNOWN_MESSAGE')).toBe(true)
  })

  it('is the only way to scrub, and it cannot be used to write content: the function checks what it is given', async () => {
    // given a message with content, and the writer's own login calling the function around the store
    const sid = await store.createSession({ tenantId: 'gdpr' })
    const m = createMessage({ role: 'user', content: 'keep me' })
    await store.append(sid, [m])
    const targets = JSON.stringify([{ sessionId: sid, seq: 1 }])
    const placeholder = (payload: unknown) => JSON.stringify([payload])
    const call = 'select * from turnlog.redact_message($1, $2, $3, $4, $5, $6, $7, null)'
    // when it passes content as a "placeholder", or leaves the event out of the targets
    const forged = await sqlStateOf(role.connectionString, call, [
      sid,
      m.id,
      targets,
      placeholder({ role: 'user', content: 'I never said that' }),
      '[]',
      '[]',
      JSON.stringify({ [sid]: m.id }),
    ])
    const extra = await sqlStateOf(role.connectionString, call, [
      sid,
      m.id,
      targets,
      placeholder({ role: 'user', content: '[redacted]', name: 'x' }),
      '[]',
      '[]',
      JSON.stringify({ [sid]: m.id }),
    ])
    const missing = await sqlStateOf(role.connectionString, call, [sid, m.id, '[]', '[]', '[]', '[]', JSON.stringify({ [sid]: m.id })])
    // then the database refuses, and the content is untouched
    expect([forged, extra, missing]).toEqual(['22023', '22023', '40001'])
    expect((await store.load(sid)).messages[0]?.payload).toEqual({ role: 'user', content: 'keep me' })
  })
})

describe('redaction on embedded PGlite', () => {
  it('scrubs, keeps the chain verifiable and shows the placeholder', async () => {
    // given an embedded store with a tool-call pair
    const { store: embedded, close: closeEmbedded } = await openTestStore('pglite')
    try {
      const sid = await embedded.createSession()
      const a = createMessage({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'c9', type: 'function', function: { name: 'f', arguments: `{"x":"${SECRET}"}` } }],
      })
      const t = createMessage({ role: 'tool', tool_call_id: 'c9', content: SECRET })
      await embedded.append(sid, [a, t])
      // when redacting both
      await embedded.redact(sid, a.id)
      await embedded.redact(sid, t.id)
      // then
      const loaded = await embedded.load(sid)
      expectNoSecret(loaded)
      expect(loaded.pairing.unanswered).toEqual([])
      expect((await verifyChain(embedded, sid)).ok).toBe(true)
    } finally {
      await closeEmbedded()
    }
  })
})

describe('the fold of a log whose rows were not scrubbed (a log from elsewhere)', () => {
  it('shows every content version of a redacted message as its placeholder, keeping ids and hashes', async () => {
    // given the events of a message, its revision and its redaction, with the original payloads
    const sid = await admin.createSession()
    const m = createMessage({ role: 'tool', tool_call_id: 'c1', content: SECRET })
    await admin.append(sid, [m])
    await admin.revise(sid, m.id, { role: 'tool', tool_call_id: 'c1', content: `${SECRET} (2)` })
    const stored: StoredEvent[] = []
    for await (const e of admin.events(sid)) stored.push(e)
    const redaction = {
      ...(stored[0] as StoredEvent),
      seq: 3,
      type: 'message_redacted',
      contentHash: null,
      payload: null,
      data: {},
    } as unknown as StoredEvent
    // when folding them
    const state = foldSession([...stored, redaction])
    const record = state.messages.get(m.id)
    // then
    expect(record?.message.payload).toEqual({ role: 'tool', content: '[redacted]', tool_call_id: 'c1' })
    expect(record?.revisions.map((r) => r.message.payload.content)).toEqual(['[redacted]', '[redacted]'])
    expect(record?.revisions.map((r) => r.contentHash)).toEqual(stored.slice(0, 2).map((e) => e.contentHash))
    expect(state.live).toEqual([m.id])
    expectNoSecret(transcriptOf(state))
  })
})
