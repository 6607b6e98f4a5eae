/**
 * The report helpers on hostile input (audit.md, "Text form and exit codes").
 *
 * - `renderFindingLine` removes every bidi control from an explanation ("bidi overrides removed so a
 *   quoted payload can neither break a line nor reorder what a terminal shows"). Regression: U+061C
 *   ARABIC LETTER MARK, one of Unicode's Bidi_Control characters like LRM and RLM (which were removed),
 *   stayed in the line: an invisible strong right-to-left character that reorders the neutral
 *   characters around it.
 * - `exitCodeFor(report, failOn)` with a `failOn` that is no severity: regression, a report without
 *   findings returned 0 (the threshold was never looked at) while one with findings threw
 *   `INVALID_INPUT`; it throws for both.
 */
import { describe, expect, it } from '@jest/globals'
import { exitCodeFor, renderFindingLine, type Finding } from '@turnlog/audit'

const S = '0190f5a2-0000-7000-8000-000000000001'

/** Every character with Unicode's Bidi_Control property. */
const BIDI_CONTROLS = [
  '\u061c',
  '\u200e',
  '\u200f',
  '\u202a',
  '\u202b',
  '\u202c',
  '\u202d',
  '\u202e',
  '\u2066',
  '\u2067',
  '\u2068',
  '\u2069',
]

describe('renderFindingLine and bidi controls', () => {
  it('removes every Bidi_Control character, ALM included', () => {
    // given: an explanation quoting a payload with each of them
    const f: Finding = {
      kind: 'lost_turn',
      severity: 'critical',
      sessionId: S,
      messageIds: [],
      seqs: [],
      eventIds: [],
      explanation: `quoted "${BIDI_CONTROLS.map((c, i) => `${c}${i}`).join('')}" end`,
    }

    // when
    const line = renderFindingLine(f)

    // then
    expect(line).toBe(`CRITICAL lost_turn session=${S} seq=-: quoted "01234567891011" end`)
    expect(line.match(/\p{Bidi_Control}/u)).toBeNull()
  })
})

describe('exitCodeFor with a threshold that is no severity', () => {
  it('throws INVALID_INPUT naming failOn, for a clean report too', () => {
    // given
    const clean = { findings: [] }

    // when / then
    expect(() => exitCodeFor(clean, 'fatal' as never)).toThrow(
      expect.objectContaining({ code: 'INVALID_INPUT', details: { field: 'failOn' } }),
    )
    expect(exitCodeFor(clean, 'info')).toBe(0)
  })
})
