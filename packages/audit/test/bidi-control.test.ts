/**
 * The bidi-control set is written twice in `bidi-control.ts` (a regular expression for `replace`, a
 * predicate for code-unit loops); this pins them to each other over every UTF-16 code unit, and to
 * Unicode's Bidi_Control property as the JavaScript engine knows it.
 */
import { describe, expect, it } from '@jest/globals'
import { BIDI_CONTROLS, isBidiControl } from '@turnlog/audit/internal'

describe('BIDI_CONTROLS and isBidiControl', () => {
  it('agree with each other and with \\p{Bidi_Control} on every code unit', () => {
    // given every UTF-16 code unit
    const disagreements: string[] = []
    for (let c = 0; c <= 0xffff; c++) {
      const ch = String.fromCharCode(c)
      // when each definition is asked
      const byRegex = ch.replace(BIDI_CONTROLS, '') === ''
      const byUnicode = /\p{Bidi_Control}/u.test(ch)
      // then they give one answer
      if (byRegex !== isBidiControl(c) || byRegex !== byUnicode) disagreements.push(c.toString(16))
    }
    expect(disagreements).toEqual([])
  })
})
