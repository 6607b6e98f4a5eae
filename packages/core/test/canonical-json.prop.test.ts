import { describe, expect, it } from '@jest/globals'
import canonicalize from 'canonicalize'
import fc from 'fast-check'
import { canonicalJson } from '@turnlog/core'
import { chatPayloadArb, jsonValueArb } from '@turnlog/testing'
import { hasLoneSurrogate, stringsOf, wellFormed } from './support/json-tools.js'

const RUNS = { numRuns: 300 }

describe('canonicalJson against the canonicalize package (the RFC 8785 oracle)', () => {
  it.each([
    ['agrees on every JSON value without lone surrogates', jsonValueArb.map(wellFormed)],
    ["agrees with fast-check's own JSON values (other key and number distributions)", fc.jsonValue({ stringUnit: 'binary' })],
    ['agrees on every provider payload without lone surrogates', chatPayloadArb.map(wellFormed)],
  ] as [string, fc.Arbitrary<unknown>][])('%s', (_title, valueArb) => {
    fc.assert(
      fc.property(valueArb, (value) => {
        expect(canonicalJson(value)).toBe(canonicalize(value))
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
