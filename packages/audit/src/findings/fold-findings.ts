import type { Finding } from '../audit-report.js'
import { makeFinding, type SessionAudit } from './make-finding.js'

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g

/** One `fold_anomaly` per anomaly of the fold, or one for a fold that failed outright. */
export function foldFindings(audit: SessionAudit, foldError: unknown): Finding[] {
  if (audit.state === null) {
    return [
      makeFinding('fold_anomaly', audit.sessionId, {
        explanation: `the log cannot be folded: ${foldError instanceof Error ? foldError.message : String(foldError)}`,
        evidence: { anomaly: 'fold_failed' },
      }),
    ]
  }
  return audit.state.anomalies.map((a) => {
    const event = audit.bySeq.get(a.seq)
    const named = a.explanation.match(UUID) ?? []
    return makeFinding('fold_anomaly', audit.sessionId, {
      messageIds: event?.messageId ? [event.messageId] : named,
      seqs: [a.seq],
      eventIds: event ? [event.eventId] : [],
      explanation: `seq ${a.seq}${event ? ` (${event.type})` : ''}: ${a.explanation}`,
      evidence: { anomaly: a.kind },
    })
  })
}
