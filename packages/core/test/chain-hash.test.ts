import { describe, expect, it } from '@jest/globals'
import { GENESIS_HASH, chainHash, type ChainInput } from '@turnlog/core'
import { sha256 } from './support/independent-hashes.js'

const input: ChainInput = {
  sessionId: '0190f5a2-3b4c-7d8e-9f01-23456789abcd',
  seq: 1,
  eventId: '0190f5a2-3b4c-7d8e-9f01-000000000001',
  type: 'message_appended',
  messageId: '0190f5a2-3b4c-7d8e-9f01-000000000002',
  contentHash: 'ab'.repeat(32),
  dataText: '{"createdAt":"2026-01-01T00:00:00.000Z"}',
  payloadText: '{"role":"user","content":"héllo 😀"}',
}

/** The documented format, written with node:crypto. */
function expected(prevHex: string, i: ChainInput): string {
  const head = [i.sessionId, String(i.seq), i.eventId, i.type, i.messageId ?? '', i.contentHash ?? ''].join('\n') + '\n'
  return sha256(
    Buffer.concat([
      Buffer.from(prevHex, 'hex'),
      Buffer.from(head, 'utf8'),
      Buffer.from(sha256(i.dataText), 'hex'),
      Buffer.from(sha256(i.payloadText ?? ''), 'hex'),
    ]),
  )
}

describe('chainHash', () => {
  it('starts from 32 zero bytes', () => {
    expect(GENESIS_HASH).toBe('0'.repeat(64))
  })

  it('pins format 1: sha256(prev ‖ head ‖ sha256(data) ‖ sha256(payload))', () => {
    // when
    const hash = chainHash(GENESIS_HASH, input)

    // then
    expect(hash).toBe(expected(GENESIS_HASH, input))
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('pins the format for an event without message, content hash or payload', () => {
    // given
    const retract: ChainInput = {
      ...input,
      seq: 7,
      type: 'messages_retracted',
      messageId: null,
      contentHash: null,
      payloadText: null,
      dataText: '{"ids":[]}',
    }
    const prev = 'cd'.repeat(32)

    // when / then
    expect(chainHash(prev, retract)).toBe(expected(prev, retract))
  })

  it('is deterministic', () => {
    expect(chainHash(GENESIS_HASH, input)).toBe(chainHash(GENESIS_HASH, { ...input }))
  })

  it.each<[string, Partial<ChainInput>]>([
    ['sessionId', { sessionId: '0190f5a2-3b4c-7d8e-9f01-23456789abce' }],
    ['seq', { seq: 2 }],
    ['eventId', { eventId: '0190f5a2-3b4c-7d8e-9f01-000000000009' }],
    ['type', { type: 'message_revised' }],
    ['messageId', { messageId: '0190f5a2-3b4c-7d8e-9f01-000000000003' }],
    ['messageId (to null)', { messageId: null }],
    ['contentHash', { contentHash: 'ac'.repeat(32) }],
    ['contentHash (to null)', { contentHash: null }],
    ['dataText', { dataText: '{"createdAt":"2026-01-01T00:00:00.001Z"}' }],
    ['payloadText', { payloadText: '{"role":"user","content":"hello 😀"}' }],
    ['payloadText (to null)', { payloadText: null }],
  ])('changes when %s changes', (_field, change) => {
    expect(chainHash(GENESIS_HASH, { ...input, ...change })).not.toBe(chainHash(GENESIS_HASH, input))
  })

  it('changes when the previous hash changes (the chain links events)', () => {
    expect(chainHash('00'.repeat(31) + '01', input)).not.toBe(chainHash(GENESIS_HASH, input))
  })
})
