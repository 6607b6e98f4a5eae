import { describe, expect, it } from '@jest/globals'
import {
  EXTERNAL_ID_NAMESPACE,
  EXTERNAL_SCOPE_NAMESPACE,
  EXTERNAL_SESSION_NAMESPACE,
  createMessage,
  messageIdFromExternal,
  newEventId,
  newMessageId,
  newSessionId,
  parseEventId,
  parseMessageId,
  parseSessionId,
  sessionIdFromExternal,
} from '@turnlog/core'
import { codeOf } from './support/error-code.js'
import { DNS_NAMESPACE, uuidV5 } from './support/independent-hashes.js'

const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/
const UUID_V5 = /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/

describe('minted ids', () => {
  it('are lower-case UUIDv7 strings', () => {
    // given / when
    const ids = [newMessageId(), newSessionId(), newEventId(), createMessage({ role: 'user', content: 'hi' }).id]

    // then
    for (const id of ids) expect(id).toMatch(UUID_V7)
  })

  it('carry the current time in their first 48 bits', () => {
    // given
    const before = Date.now()

    // when
    const id = newMessageId()

    // then
    const ms = parseInt(id.replace(/-/g, '').slice(0, 12), 16)
    expect(ms).toBeGreaterThanOrEqual(before)
    expect(ms).toBeLessThanOrEqual(Date.now())
  })

  it('are strictly increasing for 10k messages created in a tight loop', () => {
    // given
    const ids: string[] = []

    // when
    for (let i = 0; i < 10_000; i++) ids.push(createMessage({ role: 'user', content: String(i) }).id)

    // then: lower-case hex sorts like the bytes, so string order is creation order
    let outOfOrder = 0
    for (let i = 1; i < ids.length; i++) if (!((ids[i - 1] as string) < (ids[i] as string))) outOfOrder++
    expect(outOfOrder).toBe(0)
    expect(new Set(ids).size).toBe(ids.length)
  })
})

describe('minted ids, drawn from the pooled random bytes', () => {
  /** The 128 bits of a UUID as a hex string of 32 digits. */
  const hex = (id: string): string => id.replace(/-/g, '')

  it('stay RFC 9562 v7 across many refills of the pool: version 7, variant 10, time in the first 48 bits', () => {
    // given: far more ids than one pool holds (256), of every kind, interleaved
    const before = Date.now()
    const ids: string[] = []

    // when
    for (let i = 0; i < 3_000; i++) ids.push(newMessageId(), newSessionId(), newEventId())

    // then
    const after = Date.now()
    for (const id of ids) {
      expect(id).toMatch(UUID_V7)
      const h = hex(id)
      expect(h[12]).toBe('7')
      expect(parseInt(h[16] as string, 16) >> 2).toBe(0b10)
      const ms = parseInt(h.slice(0, 12), 16)
      expect(ms).toBeGreaterThanOrEqual(before)
      expect(ms).toBeLessThanOrEqual(after + 1)
    }
  })

  it('are strictly increasing and unique across kinds and refills: one counter for all', () => {
    // given / when
    const ids: string[] = []
    for (let i = 0; i < 3_000; i++) ids.push(newEventId(), newMessageId(), newSessionId())

    // then
    let outOfOrder = 0
    for (let i = 1; i < ids.length; i++) if (!((ids[i - 1] as string) < (ids[i] as string))) outOfOrder++
    expect(outOfOrder).toBe(0)
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('never reuse random bytes: the last 48 bits (random in every id) are all distinct', () => {
    // given / when: 40 pools' worth of ids
    const tails = Array.from({ length: 10_240 }, () => hex(newMessageId()).slice(20))

    // then: 48 random bits each, so a repeat among 10,240 has odds of about 2^-22; a reused or
    // unrefilled pool would repeat them all
    expect(new Set(tails).size).toBe(tails.length)
  })

  it('count up by one within a millisecond (RFC 9562 method 1), from a random start in each new one', () => {
    // given: ids minted back to back, most sharing a millisecond with the one before
    const ids = Array.from({ length: 2_000 }, () => hex(newMessageId()))
    // the 32-bit counter: the 12 bits after the version nibble, then (past the 2 variant bits) 20 more;
    // hex digits 13–21 hold 36 bits: counter 31–20, variant, counter 19–0, 2 random bits
    const counter = (h: string): number => {
      const bits = BigInt(`0x${h.slice(13, 22)}`)
      return Number(((bits >> 24n) << 20n) | ((bits >> 2n) & 0xfffffn))
    }

    // when
    let sameMs = 0
    let stepsOfOne = 0
    for (let i = 1; i < ids.length; i++) {
      const a = ids[i - 1] as string
      const b = ids[i] as string
      if (a.slice(0, 12) !== b.slice(0, 12)) continue
      sameMs++
      if (counter(b) - counter(a) === 1) stepsOfOne++
    }

    // then
    expect(sameMs).toBeGreaterThan(0)
    expect(stepsOfOne).toBe(sameMs)
  })
})

describe('derived ids', () => {
  it('pins the namespaces: changing them would give redelivered messages new ids', () => {
    // given: the namespaces are UUIDv5 of fixed DNS names in the RFC 4122 DNS namespace
    // then
    expect(EXTERNAL_ID_NAMESPACE).toBe('bcf95bd2-7e79-5a35-9a1e-8ca612117e41')
    expect(EXTERNAL_ID_NAMESPACE).toBe(uuidV5('external-id.turnlog.dev', DNS_NAMESPACE))
    expect(EXTERNAL_SESSION_NAMESPACE).toBe('af8da928-b724-5336-b033-4817aa1367a7')
    expect(EXTERNAL_SESSION_NAMESPACE).toBe(uuidV5('external-session.turnlog.dev', DNS_NAMESPACE))
    expect(EXTERNAL_SCOPE_NAMESPACE).toBe('84e4f8fe-a399-5e23-a2f4-fa343f93fd6b')
    expect(EXTERNAL_SCOPE_NAMESPACE).toBe(uuidV5('external-scope.turnlog.dev', DNS_NAMESPACE))
  })

  it('derives a message id as UUIDv5 of the external id in EXTERNAL_ID_NAMESPACE', () => {
    // given
    const externalId = 'telegram:chat42:msg9001'

    // when
    const id = messageIdFromExternal(externalId)

    // then
    expect(id).toMatch(UUID_V5)
    expect(id).toBe(uuidV5(externalId, EXTERNAL_ID_NAMESPACE))
    expect(id).toBe('a2c839f3-f2d3-5fe1-9ce5-03df8a7d8840')
  })

  it('derives session ids in their own namespace', () => {
    // given
    const key = 'hermes:20260101_120000_abc'

    // when
    const sessionId = sessionIdFromExternal(key)

    // then
    expect(sessionId).toBe(uuidV5(key, EXTERNAL_SESSION_NAMESPACE))
    expect(sessionId).not.toBe(messageIdFromExternal(key))
  })

  it('derives ids from external ids with lone surrogates, without collisions', () => {
    // given: platform ids cut in the middle of an emoji; TextEncoder would map all three to U+FFFD
    const externalIds = ['msg-\ud83d', 'msg-\ud83e', 'msg-\ufffd', 'msg-\ude00', 'msg-😀']

    // when
    const ids = externalIds.map((x) => messageIdFromExternal(x))

    // then
    expect(new Set(ids).size).toBe(externalIds.length)
    ids.forEach((id, i) => expect(id).toBe(uuidV5(externalIds[i] as string, EXTERNAL_ID_NAMESPACE)))
    expect(messageIdFromExternal('msg-\ud83d')).toBe(ids[0])
  })

  it('refuses an empty external id', () => {
    expect(codeOf(() => messageIdFromExternal(''))).toBe('INVALID_INPUT')
    expect(codeOf(() => sessionIdFromExternal(''))).toBe('INVALID_INPUT')
  })
})

describe('parseMessageId / parseSessionId / parseEventId', () => {
  it('lower-cases a valid UUID', () => {
    // given
    const upper = '0190F5A2-3B4C-7D8E-9F01-23456789ABCD'

    // when / then
    expect(parseMessageId(upper)).toBe(upper.toLowerCase())
    expect(parseSessionId(upper)).toBe(upper.toLowerCase())
    expect(parseEventId(upper)).toBe(upper.toLowerCase())
  })

  it.each([
    ['not a uuid', 'hello'],
    ['braces', '{0190f5a2-3b4c-7d8e-9f01-23456789abcd}'],
    ['no dashes', '0190f5a23b4c7d8e9f0123456789abcd'],
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
  ])('refuses %s with INVALID_INPUT', (_what, value) => {
    expect(codeOf(() => parseMessageId(value))).toBe('INVALID_INPUT')
  })
})
