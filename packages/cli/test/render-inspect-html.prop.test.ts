import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { weirdStringArb } from '@turnlog/testing'
import { escapeHtml, scriptSafeJson } from '../src/inspect/render-inspect-html.js'

const printableAscii = (text: string): boolean => [...text].every((c) => c >= ' ' && c <= '~')

describe('the inspect page escaping (properties)', () => {
  it('scriptSafeJson: pure printable ASCII, no "<", and JSON.parse gives the exact value back', () => {
    fc.assert(
      fc.property(fc.dictionary(weirdStringArb, fc.oneof(weirdStringArb, fc.array(weirdStringArb))), (value) => {
        // when
        const text = scriptSafeJson(value)
        // then: nothing can close the script element or depend on the file's encoding
        expect(printableAscii(text)).toBe(true)
        expect(text).not.toMatch(/[<>&]/)
        expect(JSON.parse(text)).toEqual(value)
      }),
      { numRuns: 300 },
    )
  })

  it('scriptSafeJson keeps a </script> payload inert', () => {
    expect(scriptSafeJson({ c: '</script><script>alert(1)</script>' })).toBe(
      '{"c":"\\u003c/script\\u003e\\u003cscript\\u003ealert(1)\\u003c/script\\u003e"}',
    )
  })

  it('escapeHtml: no markup character and no non-ASCII character survives', () => {
    fc.assert(
      fc.property(weirdStringArb, (text) => {
        const out = escapeHtml(text)
        expect(out).not.toMatch(/[<>"']/)
        expect([...out].every((c) => c === '\n' || c === '\t' || (c >= ' ' && c <= '~'))).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
