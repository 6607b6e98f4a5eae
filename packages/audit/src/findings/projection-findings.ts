import type { ProjectionDrift } from '@turnlog/core'
import type { Finding } from '../audit-report.js'
import { appendsOf, makeFinding, type SessionAudit } from './make-finding.js'

/** Evidence lists longer than this are cut (the counts stay exact). */
const MAX_IDS = 50

/** One `projection_drift` per drift `store.rebuild({ verify: true })` reported for the session. */
export function projectionFindings(audit: SessionAudit, drift: readonly ProjectionDrift[]): Finding[] {
  return drift.map((d) => {
    const expected = new Set<string>(d.expected)
    const actual = new Set<string>(d.actual)
    const missing = d.expected.filter((id) => !actual.has(id))
    const extra = d.actual.filter((id) => !expected.has(id))
    const involved = missing.length + extra.length > 0 ? [...missing, ...extra] : firstDifference(d)
    return makeFinding('projection_drift', audit.sessionId, {
      messageIds: involved,
      ...appendsOf(audit, involved),
      explanation:
        `the inline projection differs from the fold of the log: ${d.explanation}` +
        (missing.length > 0 ? `; ${missing.length} live message(s) missing from it` : '') +
        (extra.length > 0 ? `; ${extra.length} message(s) in it that are not live` : '') +
        '; load() returns the wrong list until store.rebuild() repairs it',
      evidence: {
        expectedCount: d.expected.length,
        actualCount: d.actual.length,
        missing: missing.slice(0, MAX_IDS),
        extra: extra.slice(0, MAX_IDS),
        expected: d.expected.slice(0, MAX_IDS),
        actual: d.actual.slice(0, MAX_IDS),
      },
    })
  })
}

/** The first id where two lists of the same members differ (an order or revision drift). */
function firstDifference(d: ProjectionDrift): string[] {
  for (let i = 0; i < Math.max(d.expected.length, d.actual.length); i++) {
    const e = d.expected[i]
    if (e !== d.actual[i]) return e === undefined ? [] : [e]
  }
  const named = d.explanation.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/)
  return named ? [named[0]] : []
}
