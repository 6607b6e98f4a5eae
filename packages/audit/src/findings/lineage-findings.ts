import type { SessionInfo } from '@turnlog/core'
import type { Finding } from '../audit-report.js'
import { emptyForkIssue, lineageIssue, type LineageIssue } from '../check-lineage.js'
import { makeFinding, type SessionAudit } from './make-finding.js'

const SUBJECT = 'the session row'

/**
 * One `lineage_mismatch` per event at odds with the fork lineage of the session's row (`parent`, as
 * `getSession` read it; check group `lineage`): the row is covered by no chain link, its fork's
 * `session_forked` event is (seq 1), and the store writes both from one `fork` call. Evidence:
 * `problem` (see `LineageProblemKind`), `row` (the row's parent, or null) and `event` (the parent
 * the `session_forked` event names, or null when there is none).
 */
export function lineageFindings(audit: SessionAudit, parent: SessionInfo['parent']): Finding[] {
  const row = parent === null ? null : { sessionId: parent.sessionId, version: parent.version, at: parent.at }
  const finding = (issue: LineageIssue, seq: number | null, eventId: string | null): Finding =>
    makeFinding('lineage_mismatch', audit.sessionId, {
      seqs: seq === null ? [] : [seq],
      eventIds: eventId === null ? [] : [eventId],
      explanation: `${seq === null ? '' : `seq ${String(seq)}: `}${issue.text}: the row was edited after the fork (the event is chained, the row is not)`,
      evidence: { problem: issue.problem, row, event: issue.event },
    })
  const empty = emptyForkIssue(row, audit.events.length, SUBJECT)
  if (empty !== undefined) return [finding(empty, null, null)]
  const findings: Finding[] = []
  for (const e of audit.events) {
    const issue = lineageIssue(row, e, SUBJECT)
    if (issue !== undefined) findings.push(finding(issue, e.seq, e.eventId))
  }
  return findings
}
