import { describe, expect, it } from '@jest/globals'
import canonicalize from 'canonicalize'
import fc from 'fast-check'
import { canonicalJson } from '@turnlog/core'
import { chatPayloadArb, jsonValueArb } from '@turnlog/testing'
import { hasLoneSurrogate, stringsOf, wellFormed } from './support/json-tools.js'

const RUNS = { numRuns: 300 }

describe('canonicalJson against the canonicalize package (the RFC 8785 oracle)', () => {
  it('agrees on every JSON value without lone surrogates', () => {
    fc.assert(
      fc.property(jsonValueArb.map(wellFormed), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value))
      }),
      RUNS,
    )
  })

  it("agrees with fast-check's own JSON values (other key and number distributions)", () => {
    fc.assert(
      fc.property(fc.jsonValue({ stringUnit: 'binary' }), (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value))
      }),
      RUNS,
    )
  })

  it('agrees on every provider payload without lone surrogates', () => {
    fc.assert(
      fc.property(chatPayloadArb.map(wellFormed), (payload) => {
        expect(canonicalJson(payload)).toBe(canonicalize(payload))
      }),
      RUNS,
    )
  })

  it('differs from the oracle only where the oracle refuses: on lone surrogates', () => {
    let withLoneSurrogates = 0
    fc.assert(
      fc.property(jsonValueArb, (value) => {
        const lone = stringsOf(value).some((s) => hasLoneSurrogate(s))
        if (lone) {
          withLoneSurrogates++
          expect(() => canonicalize(value)).toThrow(/Lone surrogate/)
        } else {
          expect(canonicalJson(value)).toBe(canonicalize(value))
        }
      }),
      RUNS,
    )
    expect(withLoneSurrogates).toBeGreaterThan(0)
  })
})
