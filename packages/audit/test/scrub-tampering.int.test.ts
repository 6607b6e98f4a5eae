/**
 * A scrubbed (redacted) event rewritten with other placeholder-shaped content (issue 13, item 5: it
 * passed verifyChain and the audit, in the database and in an export file). The chain now commits to
 * the placeholder through the scrub record of the `message_redacted` event (`placeholderDigest`), and
 * the SQL that writes it and the TypeScript that checks it are pinned to one vector.
 */
import { describe, expect, it } from '@jest/globals'
import { audit, exportSessions, importEvents, verifyChain, verifyExport } from '@turnlog/audit'
import {
  ANTHROPIC_FORMAT,
  createMessage,
  isTurnlogError,
  placeholderDigest,
  redactedPayload,
  type ChatMessage,
  type Message,
  type SessionId,
} from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { chatPayloadArb, useTwoTestStores } from '@turnlog/testing'
import fc from 'fast-check'
import { sql } from 'kysely'

let store: PostgresStore
let importer: PostgresStore

useTwoTestStores((t) => ({ store, importer } = { store: t.source.store, importer: t.target.store }), { pool: { max: 2 } })

/** A session with a tool-call pair whose user question (seq 1) and tool result (seq 3) are redacted. */
async function redactedSession(): Promise<{ sid: SessionId; messages: Message[] }> {
  const sid = await store.createSession()
  const messages = [
    createMessage({ role: 'user', content: 'my card is 4111-1111' }),
    createMessage({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"card":"4111-1111"}' } }],
    }),
    createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'card holder: Alice' }),
    createMessage({ role: 'assistant', content: 'done' }),
  ]
  await store.append(sid, messages)
  await store.redact(sid, messages[0]?.id ?? '')
  await store.redact(sid, messages[2]?.id ?? '')
  expect((await verifyChain(store, sid)).breaks).toEqual([])
  return { sid, messages }
}

async function exportLines(sid: SessionId): Promise<string[]> {
  const out: string[] = []
  for await (const line of exportSessions(store, { sessionIds: [sid] })) out.push(line)
  return out
}

/** Other placeholder-shaped payloads for the user question (seq 1) and the tool result (seq 3). */
const FORGED: [string, number, ChatMessage][] = [
  ['the role of the user question changed to assistant', 1, { role: 'assistant', content: '[redacted]' }],
  ['the role of the user question changed to system', 1, { role: 'system', content: '[redacted]' }],
  ['the tool result paired with another call', 3, { role: 'tool', content: '[redacted]', tool_call_id: 'call_2' }],
  ['the tool result unpaired', 3, { role: 'tool', content: '[redacted]' }],
  ['the tool result turned into a user message', 3, { role: 'user', content: '[redacted]', tool_call_id: 'call_1' }],
]

describe('a rewritten redaction placeholder (regression, issue 13 item 5)', () => {
  it.each(FORGED)('in the database: verifyChain and audit find %s', async (_what, seq, forged) => {
    // given a verified redacted session
    const { sid } = await redactedSession()
    // when the owner (here the superuser) rewrites a placeholder with another valid placeholder
    await sql`update turnlog.events set payload = ${JSON.stringify(forged)}::json where session_id = ${sid} and seq = ${seq}`.execute(
      store.db,
    )
    const verification = await verifyChain(store, sid)
    const report = await audit(store, sid)
    // then both locate it at that seq
    expect(verification.breaks.map((b) => [b.seq, b.kind])).toEqual([[seq, 'redaction_mismatch']])
    expect(report.findings.filter((f) => f.severity === 'critical' && f.seqs.includes(seq)).length).toBeGreaterThan(0)
  })

  it.each(FORGED)(
    'in an export file: the import refuses (IMPORT_FAILED, nothing written) and verifyExport finds %s',
    async (_what, seq, forged) => {
      // given the export of a redacted session, which verifies offline and imports
      const { sid } = await redactedSession()
      const lines = await exportLines(sid)
      expect((await verifyExport(lines)).map((v) => v.breaks)).toEqual([[]])
      // when one placeholder is rewritten in the file
      const tampered = lines.map((line) => {
        const r = JSON.parse(line) as { kind?: string; seq?: number }
        return r.kind === 'event' && r.seq === seq ? JSON.stringify({ ...r, payload: forged }) : line
      })
      const error = await importEvents(importer, tampered).catch((e: unknown) => e)
      const offline = await verifyExport(tampered)
      // then the import refuses it with a typed error naming the seq, writes nothing, and offline verification locates it
      expect(isTurnlogError(error, 'IMPORT_FAILED')).toBe(true)
      expect((error as { details?: unknown }).details).toMatchObject({ sessionId: sid, seq, reason: 'redaction_mismatch' })
      expect(await importer.getSession(sid).catch((e: unknown) => (e as { code?: unknown }).code)).toBe('SESSION_NOT_FOUND')
      expect(offline.map((v) => v.breaks.map((b) => [b.seq, b.kind]))).toEqual([[[seq, 'redaction_mismatch']]])
    },
  )

  it('an untampered export of a redacted session imports and verifies in the target', async () => {
    const { sid } = await redactedSession()
    const result = await importEvents(importer, await exportLines(sid))
    expect(result.sessionIds).toEqual([sid])
    expect((await verifyChain(importer, sid)).breaks).toEqual([])
  })
})

describe('the placeholder digest: SQL and TypeScript agree', () => {
  // the shared vector: a tool result placeholder whose pairing id holds a NUL and a lone surrogate
  const VECTOR_TEXT = '{"role":"tool","content":"[redacted]","tool_call_id":"call_\\u0000\\ud800x"}'
  const VECTOR_DIGEST = 'ffa27461acc0988888da578ef9a5304cbd8f7a9dcfca4d91d74853724d1c8abb'

  it('turnlog.placeholder_digest and core placeholderDigest give the pinned digest of the shared vector', async () => {
    const { rows } = await sql<{ d: string }>`select encode(turnlog.placeholder_digest(${VECTOR_TEXT}::json), 'hex') as d`.execute(store.db)
    expect({ sql: rows[0]?.d, ts: placeholderDigest(JSON.parse(VECTOR_TEXT)) }).toEqual({ sql: VECTOR_DIGEST, ts: VECTOR_DIGEST })
  })

  it('agree on the placeholder of any payload', async () => {
    await fc.assert(
      fc.asyncProperty(chatPayloadArb, async (payload) => {
        const placeholder = redactedPayload(payload as ChatMessage)
        const text = JSON.stringify(placeholder)
        const { rows } = await sql<{ d: string }>`select encode(turnlog.placeholder_digest(${text}::json), 'hex') as d`.execute(store.db)
        expect(rows[0]?.d).toBe(placeholderDigest(placeholder))
      }),
      { numRuns: 60 },
    )
  })
})

/** A JSON value different from `old` (compared as text). */
function differentFrom(old: unknown): fc.Arbitrary<unknown> {
  return fc
    .oneof(
      fc.jsonValue({ maxDepth: 2 }),
      fc.constantFrom<unknown>(
        { role: 'assistant', content: '[redacted]' },
        { role: 'tool', content: '[redacted]', tool_call_id: 'call_1' },
        null,
        0,
        '',
      ),
      fc.stringMatching(/^[0-9a-f]{64}$/),
      // an absent field and a null one mean the same (no digest): not a mutation
    )
    .filter((v) => JSON.stringify(v) !== JSON.stringify(old) && !(old === undefined && v === null))
}

describe('any single-field mutation of a scrubbed event is detected (class)', () => {
  /** The fields of an export's event record the chain covers (recordedAt is data, covered for no event). */
  const FIELDS = ['sessionId', 'seq', 'eventId', 'type', 'messageId', 'contentHash', 'payload', 'data', 'payloadDigest', 'hash'] as const

  it('offline, in an export file: of the scrubbed event or of the message_redacted record that commits to it', async () => {
    const { sid } = await redactedSession()
    const lines = await exportLines(sid)
    const scrubbedLines = lines.flatMap((line, i) => {
      const r = JSON.parse(line) as { kind?: string; payloadDigest?: string; type?: string }
      return r.kind === 'event' && (r.payloadDigest !== undefined || r.type === 'message_redacted') ? [i] : []
    })
    const mutation = fc.constantFrom(...scrubbedLines).chain((index) =>
      fc.constantFrom(...FIELDS).chain((field) => {
        const record = JSON.parse(lines[index] as string) as Record<string, unknown>
        return differentFrom(record[field]).map((value) => ({ index, record, field, value }))
      }),
    )
    await fc.assert(
      fc.asyncProperty(mutation, async ({ index, record, field, value }) => {
        const tampered = [...lines]
        tampered[index] = JSON.stringify({ ...record, [field]: value })
        const result = await verifyExport(tampered).catch((e: unknown) => e)
        // detected: a break in the session, or the line refused as malformed
        const detected = isTurnlogError(result, 'IMPORT_FAILED') || (Array.isArray(result) && result.some((v: { ok: boolean }) => !v.ok))
        expect({ field, value, detected }).toEqual({ field, value, detected: true })
      }),
      { numRuns: 150 },
    )
  })

  it('in the database: an owner UPDATE of any covered column of a scrubbed event', async () => {
    const columns: [string, (sid: string) => string][] = [
      ['payload', () => `'{"role":"assistant","content":"[redacted]"}'::json`],
      ['payload_digest', () => `sha256('x')`],
      ['content_hash', () => `sha256('y')`],
      ['data', () => `'{"createdAt":"2020-01-01T00:00:00.000Z"}'::json`],
      ['message_id', () => 'gen_random_uuid()'],
      ['event_id', () => 'gen_random_uuid()'],
      ['type', () => `'message_revised'`],
      ['hash', () => `sha256('z')`],
    ]
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...columns), fc.constantFrom(1, 3), async ([column, value], seq) => {
        const { sid } = await redactedSession()
        await sql.raw(`update turnlog.events set ${column} = ${value(sid)} where session_id = '${sid}' and seq = ${seq}`).execute(store.db)
        const verification = await verifyChain(store, sid)
        expect({ column, seq, ok: verification.ok }).toEqual({ column, seq, ok: false })
      }),
      { numRuns: 16 },
    )
  })
})

describe("a placeholder of another format's shape in place of a scrubbed payload (the placeholder rule is format-aware)", () => {
  /** An anthropic tool call, redacted: its placeholder is structural (the chat shape is openai-chat's alone). */
  async function redactedAnthropicCall(): Promise<{ sid: SessionId; seq: number }> {
    const sid = await store.createSession()
    const call = createMessage(
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { card: '4111-1111' } }] },
      { format: ANTHROPIC_FORMAT },
    )
    await store.append(sid, [createMessage({ role: 'user', content: 'my card is 4111-1111' }, { format: ANTHROPIC_FORMAT }), call])
    await store.redact(sid, call.id)
    expect((await verifyChain(store, sid)).breaks).toEqual([])
    return { sid, seq: 2 }
  }

  /** The openai-chat placeholder shape, which no other format's redaction makes. */
  const CHAT_SHAPED = {
    role: 'assistant',
    content: '[redacted]',
    tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }],
  }

  it('in the database: verifyChain reports the payload as no redaction placeholder of its format', async () => {
    // given
    const { sid, seq } = await redactedAnthropicCall()

    // when
    await sql`update turnlog.events set payload = ${JSON.stringify(CHAT_SHAPED)}::json where session_id = ${sid} and seq = ${seq}`.execute(
      store.db,
    )
    const verification = await verifyChain(store, sid)

    // then
    expect(verification.breaks).toEqual([
      expect.objectContaining({ seq, kind: 'redaction_mismatch', explanation: expect.stringContaining('is not a redaction placeholder') }),
    ])
  })

  it('in an export file: the import refuses the record itself (IMPORT_FAILED, nothing written)', async () => {
    // given
    const { sid, seq } = await redactedAnthropicCall()
    const lines = await exportLines(sid)

    // when
    const tampered = lines.map((line) => {
      const r = JSON.parse(line) as { kind?: string; seq?: number }
      return r.kind === 'event' && r.seq === seq ? JSON.stringify({ ...r, payload: CHAT_SHAPED }) : line
    })
    const error = await importEvents(importer, tampered).catch((e: unknown) => e)

    // then
    expect(isTurnlogError(error, 'IMPORT_FAILED')).toBe(true)
    expect((error as Error).message).toContain("a redacted event's payload must be a redaction placeholder")
    expect(await importer.getSession(sid).catch((e: unknown) => (e as { code?: unknown }).code)).toBe('SESSION_NOT_FOUND')
  })
})
