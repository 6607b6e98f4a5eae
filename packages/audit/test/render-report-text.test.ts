import { describe, expect, it } from '@jest/globals'
import { countFindings, renderFindingLine, renderReportText, type AuditReport, type Finding } from '@turnlog/audit'

const S = '0190f5a2-3b4c-7d8e-9f01-23456789abcd'

function report(findings: Finding[], target: AuditReport['target'] = S): AuditReport {
  return {
    formatVersion: 1,
    generatedAt: '2026-03-01T10:00:00.000Z',
    target,
    sessionsAudited: 1,
    findings,
    counts: countFindings(findings),
  }
}

describe('renderReportText', () => {
  it('prints a header with the counts and one line per finding', () => {
    // given
    const findings: Finding[] = [
      {
        kind: 'truncated_log',
        severity: 'critical',
        sessionId: S,
        messageIds: [],
        seqs: [4],
        eventIds: [],
        explanation: 'the tail was deleted',
      },
      {
        kind: 'duplicate_tool_result',
        severity: 'error',
        sessionId: S,
        messageIds: ['a', 'b'],
        seqs: [3, 4, 5, 9],
        eventIds: [],
        explanation: 'two results',
      },
      { kind: 'lost_turn', severity: 'critical', sessionId: S, messageIds: [], seqs: [], eventIds: [], explanation: 'not in the log' },
    ]

    // when
    const text = renderReportText(report(findings))

    // then
    expect(text).toBe(
      [
        `turnlog audit of session ${S}: 1 session(s), 3 finding(s) (2 critical, 1 error, 0 warning, 0 info) at 2026-03-01T10:00:00.000Z`,
        `CRITICAL truncated_log session=${S} seq=4: the tail was deleted`,
        `ERROR    duplicate_tool_result session=${S} seq=3-5,9: two results`,
        `CRITICAL lost_turn session=${S} seq=-: not in the log`,
        '',
      ].join('\n'),
    )
  })

  it('says so when there is nothing to report', () => {
    // when
    const text = renderReportText({ ...report([], { all: true }), sessionsAudited: 12 })

    // then
    expect(text).toBe(
      'turnlog audit of all sessions: 12 session(s), 0 finding(s) (0 critical, 0 error, 0 warning, 0 info) at 2026-03-01T10:00:00.000Z\nno findings\n',
    )
  })

  it('keeps each finding on one line: control characters, separators and bidi overrides are neutralised', () => {
    // given: an explanation that quotes hostile content
    const f: Finding = {
      kind: 'lost_turn',
      severity: 'critical',
      sessionId: S,
      messageIds: [],
      seqs: [],
      eventIds: [],
      explanation: 'a\nb\r\u0000c\u2028d \u202eevil\u202c \u001b[31mred',
    }

    // when
    const line = renderFindingLine(f)

    // then
    expect(line).toBe(`CRITICAL lost_turn session=${S} seq=-: a b c d evil  [31mred`)
    expect(renderReportText(report([f])).split('\n')).toHaveLength(3)
  })

  it('has a JSON form that is the report itself, formatVersion 1', () => {
    // given
    const r = report([
      {
        kind: 'seq_gap',
        severity: 'critical',
        sessionId: S,
        messageIds: [],
        seqs: [5],
        eventIds: ['e'],
        explanation: 'gap',
        evidence: { expected: 4 },
      },
    ])

    // when
    const parsed = JSON.parse(JSON.stringify(r)) as AuditReport

    // then
    expect(parsed).toEqual(r)
    expect(Object.keys(parsed)).toEqual(['formatVersion', 'generatedAt', 'target', 'sessionsAudited', 'findings', 'counts'])
    expect(parsed.formatVersion).toBe(1)
  })
})
