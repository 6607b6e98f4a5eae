/**
 * The streaming verifier on synthetic logs: cases a Postgres schema cannot hold (a repeated seq, seqs
 * going backwards) and redaction (scrubbed payloads, their records, fork copies of placeholders).
 */
import { describe, expect, it } from '@jest/globals'
import {
  GENESIS_HASH,
  chainHash,
  contentHash,
  placeholderDigest,
  redactedPayload,
  sha256Hex,
  type ChatMessage,
  type StoredEvent,
} from '@turnlog/core'
import { ChainVerifier } from '../src/verify-chain.js'

const SESSION = '0190f5a2-3b4c-7d8e-9f01-23456789abcd'
const mid = (n: number): string => `0190f5a2-3b4c-7d8e-9f01-${String(n).padStart(12, '0')}`
const eid = (n: number): string => `0190f5a2-3b4c-7d8e-af01-${String(n).padStart(12, '0')}`

interface Spec {
  seq: number
  type?: StoredEvent['type']
  messageId?: string | null
  payload?: ChatMessage | null
  contentHash?: string | null
  data?: Record<string, unknown>
  payloadDigest?: string
}

/** Events linked the way the database links them (over the texts as stored), then optionally edited. */
function log(specs: readonly Spec[]): StoredEvent[] {
  let prev = GENESIS_HASH
  return specs.map((s, i) => {
    const type = s.type ?? 'message_appended'
    const payload = s.payload === undefined ? ({ role: 'user', content: `m${s.seq}` } as ChatMessage) : s.payload
    const messageId = s.messageId === undefined ? mid(s.seq) : s.messageId
    const hash = s.contentHash === undefined ? (payload === null ? null : contentHash(payload)) : s.contentHash
    const data = s.data ?? (type === 'message_appended' ? { createdAt: '2026-01-01T00:00:00.000Z' } : {})
    const event = {
      sessionId: SESSION,
      seq: s.seq,
      eventId: eid(i + 1),
      type,
      messageId,
      contentHash: hash,
      payload,
      data,
      recordedAt: '2026-01-01T00:00:00.000Z',
      ...(s.payloadDigest === undefined ? {} : { payloadDigest: s.payloadDigest }),
    }
    const link = chainHash(prev, {
      sessionId: SESSION,
      seq: s.seq,
      eventId: event.eventId,
      type,
      messageId,
      contentHash: hash,
      dataText: JSON.stringify(data),
      payloadText: payload === null ? null : JSON.stringify(payload),
      payloadDigest: s.payloadDigest ?? null,
    })
    prev = link
    return { ...event, hash: link } as unknown as StoredEvent
  })
}

function verify(events: readonly StoredEvent[], version = events.at(-1)?.seq ?? 0): ReturnType<ChainVerifier['finish']> {
  const v = new ChainVerifier(SESSION)
  for (const e of events) v.push(e)
  return v.finish(version)
}

const secret = { role: 'user', content: 'my card is 4111 1111 1111 1111' } as ChatMessage

/** seq 2 holds `secret`, scrubbed: placeholder payload, digest of the original text, plus its record at seq 4. */
function redactedLog(
  overrides: { record?: Spec | null; placeholder?: ChatMessage; recorded?: Record<string, unknown> } = {},
): StoredEvent[] {
  const digest = sha256Hex(JSON.stringify(secret))
  // what redact_message records (0009): the original's content hash and digest, and the placeholder's digest
  const scrub = overrides.recorded ?? {
    seq: 2,
    contentHash: contentHash(secret),
    payloadDigest: digest,
    placeholderDigest: placeholderDigest(redactedPayload(secret)),
  }
  const specs: Spec[] = [
    { seq: 1 },
    { seq: 2, payload: overrides.placeholder ?? redactedPayload(secret), contentHash: contentHash(secret), payloadDigest: digest },
    { seq: 3 },
  ]
  const record =
    overrides.record === undefined
      ? {
          seq: 4,
          type: 'message_redacted' as const,
          messageId: mid(2),
          payload: null,
          contentHash: null,
          data: { scrubbed: [scrub], origin: SESSION },
        }
      : overrides.record
  if (record !== null) specs.push(record)
  return log(specs)
}

describe('ChainVerifier', () => {
  it('accepts a log linked as the database links it', () => {
    // when
    const result = verify(
      log([
        { seq: 1 },
        { seq: 2 },
        { seq: 3, type: 'messages_retracted', messageId: null, payload: null, data: { ids: [mid(2)], target: { from: mid(2) } } },
      ]),
    )

    // then
    expect(result).toMatchObject({ ok: true, checked: 3, breaks: [] })
  })

  it.each([
    ['first', 0],
    ['second', 1],
  ])('reports a seq stored twice, checks both copies, and links the next event from either (the %s)', (_, from) => {
    // given: seq 2 twice, both linked from seq 1; seq 3 linked from one of them
    const original = log([{ seq: 1 }, { seq: 2 }, { seq: 3 }])
    const other = log([{ seq: 1 }, { seq: 2, payload: { role: 'user', content: 'other' } as ChatMessage }, { seq: 3 }])
    const copies = [original[1], other[1]] as StoredEvent[]
    const next = (from === 0 ? original[2] : other[2]) as StoredEvent
    const events = [original[0], ...copies, next] as StoredEvent[]

    // when
    const result = verify(events, 3)

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'seq_duplicate']])
  })

  it('still reports a broken link after a duplicate seq', () => {
    // given
    const original = log([{ seq: 1 }, { seq: 2 }, { seq: 3 }])
    const other = log([{ seq: 1 }, { seq: 2, payload: { role: 'user', content: 'other' } as ChatMessage }])
    const events = [original[0], original[1], other[1], { ...original[2], hash: 'ab'.repeat(32) }] as StoredEvent[]

    // when
    const result = verify(events, 3)

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([
      [2, 'seq_duplicate'],
      [3, 'hash_mismatch'],
    ])
  })

  it('reports seqs that go backwards', () => {
    // given
    const [e1, e2, e3] = log([{ seq: 1 }, { seq: 2 }, { seq: 3 }])
    const events = [e1, e3, e2] as StoredEvent[]

    // when
    const result = verify(events, 3)

    // then
    expect(result.breaks.map((b) => b.kind)).toEqual(expect.arrayContaining(['seq_gap', 'seq_duplicate']))
  })

  it('accepts a redaction: the chain covers the original digest, the placeholder is recorded', () => {
    // when
    const result = verify(redactedLog())

    // then
    expect(result.breaks).toEqual([])
  })

  it('accepts a fork copy of a placeholder (data.redacted) without a record of its own', () => {
    // given
    const events = log([
      {
        seq: 1,
        payload: redactedPayload(secret),
        contentHash: contentHash(secret),
        data: { createdAt: '2026-01-01T00:00:00.000Z', redacted: true },
      },
    ])

    // when / then
    expect(verify(events).breaks).toEqual([])
  })

  it('reports a scrub that no message_redacted event records (a forged redaction)', () => {
    // when
    const result = verify(redactedLog({ record: null }), 3)

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'redaction_mismatch']])
  })

  it('reports a "scrubbed" payload that is not a placeholder (content slipped in under a digest)', () => {
    // when
    const result = verify(redactedLog({ placeholder: { role: 'user', content: 'I agree to pay 1000 EUR' } as ChatMessage }))

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[2, 'redaction_mismatch']])
  })

  it('reports a placeholder rewritten after the scrub with another valid placeholder (issue 13 item 5)', () => {
    // when the scrubbed payload is another role's placeholder, or the tool-call pairing is forged
    const roles = verify(redactedLog({ placeholder: { role: 'assistant', content: '[redacted]' } as ChatMessage }))
    const pairing = verify(redactedLog({ placeholder: { role: 'user', content: '[redacted]', tool_call_id: 'call_9' } as ChatMessage }))

    // then each is located at the scrubbed seq
    expect([roles, pairing].map((r) => r.breaks.map((b) => [b.seq, b.kind]))).toEqual([
      [[2, 'redaction_mismatch']],
      [[2, 'redaction_mismatch']],
    ])
  })

  it('reports a scrub record that does not commit to its placeholder (written before migration 0009), and one with another content hash', () => {
    // given the records
    const digest = sha256Hex(JSON.stringify(secret))
    const old = verify(redactedLog({ recorded: { seq: 2, payloadDigest: digest } }))
    const otherHash = verify(
      redactedLog({
        recorded: {
          seq: 2,
          contentHash: 'ab'.repeat(32),
          payloadDigest: digest,
          placeholderDigest: placeholderDigest(redactedPayload(secret)),
        },
      }),
    )

    // then
    expect([old, otherHash].map((r) => r.breaks.map((b) => [b.seq, b.kind]))).toEqual([
      [[2, 'redaction_mismatch']],
      [[2, 'redaction_mismatch']],
    ])
  })

  it('reports a record naming an event that holds no scrubbed payload (an undone redaction)', () => {
    // given: the record claims seq 3 was scrubbed
    const digest = sha256Hex(JSON.stringify(secret))
    const events = log([
      { seq: 1 },
      { seq: 2 },
      {
        seq: 3,
        type: 'message_redacted',
        messageId: mid(2),
        payload: null,
        contentHash: null,
        data: { scrubbed: [{ seq: 2, payloadDigest: digest }] },
      },
    ])

    // when
    const result = verify(events)

    // then
    expect(result.breaks.map((b) => [b.seq, b.kind])).toEqual([[3, 'redaction_mismatch']])
  })
})
