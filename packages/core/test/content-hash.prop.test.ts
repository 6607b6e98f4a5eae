import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { canonicalJson, contentHash, createMessage, type ChatMessage } from '@turnlog/core'
import { chatPayloadArb, jsonValueArb } from '@turnlog/testing'
import { seededRandom, shuffleKeys } from './support/json-tools.js'

const RUNS = { numRuns: 300 }

describe('contentHash (properties)', () => {
  it('is stable under a deep shuffle of object keys', () => {
    let reordered = 0
    fc.assert(
      fc.property(chatPayloadArb, fc.integer(), (payload, seed) => {
        // given
        const shuffled = shuffleKeys(payload, seededRandom(seed)) as ChatMessage
        if (JSON.stringify(shuffled) !== JSON.stringify(payload)) reordered++

        // when / then
        expect(contentHash(shuffled)).toBe(contentHash(payload))
        expect(contentHash(createMessage(shuffled))).toBe(contentHash(createMessage(payload)))
      }),
      RUNS,
    )
    // the property only means something if keys actually moved
    expect(reordered).toBeGreaterThan(RUNS.numRuns / 3)
  })

  it('is stable under a JSON round trip', () => {
    fc.assert(
      fc.property(chatPayloadArb, (payload) => {
        // when
        const back = JSON.parse(JSON.stringify(payload)) as ChatMessage

        // then
        expect(contentHash(back)).toBe(contentHash(payload))
      }),
      RUNS,
    )
  })

  it('is the hash of the payload given to createMessage (copying changes nothing)', () => {
    fc.assert(
      fc.property(chatPayloadArb, (payload) => {
        expect(contentHash(createMessage(payload))).toBe(contentHash(payload))
      }),
      RUNS,
    )
  })

  it('differs for payloads whose canonical JSON differs', () => {
    fc.assert(
      fc.property(chatPayloadArb, chatPayloadArb, (a, b) => {
        fc.pre(canonicalJson(a) !== canonicalJson(b))
        expect(contentHash(a)).not.toBe(contentHash(b))
      }),
      RUNS,
    )
  })
})

describe('canonicalJson (properties)', () => {
  it('loses nothing: parsing it gives the value back, lone surrogates included', () => {
    fc.assert(
      fc.property(jsonValueArb, (value) => {
        // when
        const back: unknown = JSON.parse(canonicalJson(value))

        // then: equal up to key order (and -0, which JSON writes as 0)
        expect(canonicalJson(back)).toBe(canonicalJson(value))
        expect(back).toEqual(JSON.parse(JSON.stringify(value)))
      }),
      RUNS,
    )
  })

  it('is idempotent and has no whitespace outside strings', () => {
    fc.assert(
      fc.property(jsonValueArb, (value) => {
        const text = canonicalJson(value)
        expect(canonicalJson(JSON.parse(text))).toBe(text)
        expect(text.replace(/"(?:[^"\\]|\\.)*"/g, '')).not.toMatch(/\s/)
      }),
      RUNS,
    )
  })
})
