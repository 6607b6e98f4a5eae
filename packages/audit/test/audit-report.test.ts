import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import {
  AUDIT_CHECKS,
  FINDING_KINDS,
  SEVERITIES,
  countFindings,
  exitCodeFor,
  severityAtLeast,
  type Finding,
  type FindingKind,
  type Severity,
} from '@turnlog/audit'

function finding(kind: FindingKind, severity: Severity = FINDING_KINDS[kind].severity): Finding {
  return { kind, severity, sessionId: '0190f5a2-3b4c-7d8e-9f01-23456789abcd', messageIds: [], seqs: [1], eventIds: [], explanation: kind }
}

const docs = readFileSync(new URL('../../../docs/audit.md', import.meta.url), 'utf8')

describe('severities', () => {
  it('orders info < warning < error < critical', () => {
    expect(SEVERITIES).toEqual(['info', 'warning', 'error', 'critical'])
    expect(severityAtLeast('critical', 'error')).toBe(true)
    expect(severityAtLeast('error', 'error')).toBe(true)
    expect(severityAtLeast('warning', 'error')).toBe(false)
    expect(severityAtLeast('info', 'info')).toBe(true)
    expect(severityAtLeast('info', 'warning')).toBe(false)
  })

  it('exits 1 exactly when a finding reaches failOn', () => {
    // given
    const report = { findings: [finding('unanswered_tool_call'), finding('projection_drift')] } // warning, error

    // then
    expect(exitCodeFor(report, 'info')).toBe(1)
    expect(exitCodeFor(report, 'warning')).toBe(1)
    expect(exitCodeFor(report, 'error')).toBe(1)
    expect(exitCodeFor(report, 'critical')).toBe(0)
    expect(exitCodeFor({ findings: [] }, 'info')).toBe(0)
  })
})

describe('countFindings', () => {
  it('counts every severity (zeros included) and the kinds that occur, in registry order', () => {
    // given
    const findings = [finding('lost_turn'), finding('chain_break'), finding('lost_turn', 'error'), finding('unexpected_message', 'info')]

    // when
    const counts = countFindings(findings)

    // then
    expect(counts.bySeverity).toEqual({ info: 1, warning: 0, error: 1, critical: 2 })
    expect(counts.byKind).toEqual({ chain_break: 1, lost_turn: 2, unexpected_message: 1 })
    expect(Object.keys(counts.byKind)).toEqual(['chain_break', 'lost_turn', 'unexpected_message'])
  })
})

describe('the registry and docs/audit.md', () => {
  it('gives every kind a valid severity, a known check group, a description and an incident', () => {
    for (const [kind, info] of Object.entries(FINDING_KINDS)) {
      expect([kind, SEVERITIES.includes(info.severity)]).toEqual([kind, true])
      expect([kind, Object.hasOwn(AUDIT_CHECKS, info.check)]).toEqual([kind, true])
      expect(info.description.length).toBeGreaterThan(10)
      expect(info.incident.length).toBeGreaterThan(10)
    }
  })

  it('documents every finding kind with its default severity, and no other', () => {
    // given
    const documented = [...docs.matchAll(/^### `([a-z_]+)` — (info|warning|error|critical)$/gm)].map((m) => [m[1], m[2]])

    // then
    expect(documented).toEqual(Object.entries(FINDING_KINDS).map(([kind, info]) => [kind, info.severity]))
  })

  it('marks the kinds with graded severities as variable, and only those', () => {
    for (const [kind, info] of Object.entries(FINDING_KINDS)) {
      const section = docs.split(`### \`${kind}\``)[1]?.split('\n### ')[0] ?? ''
      expect([kind, section.includes('*Variable.*')]).toEqual([kind, 'variable' in info])
    }
  })

  it('lists every check group with its description', () => {
    for (const [check, description] of Object.entries(AUDIT_CHECKS)) {
      expect(docs).toContain(`| \`${check}\` | ${description} |`)
    }
  })

  it('shows a JSON example of each kind that parses once the elisions are filled in', () => {
    for (const kind of Object.keys(FINDING_KINDS)) {
      // given
      const section = docs.split(`### \`${kind}\``)[1]?.split('\n### ')[0] ?? ''
      const example = /```json\n([\s\S]*?)\n```/.exec(section)?.[1]

      // when
      const parsed = JSON.parse((example ?? 'null').replace(/…/g, '')) as Finding | null

      // then
      expect([kind, parsed?.kind, parsed?.severity !== undefined && SEVERITIES.includes(parsed.severity)]).toEqual([kind, kind, true])
    }
  })
})
