import type { ConflictRecord } from '@turnlog/core'
import type { Finding } from '../audit-report.js'
import { appendOf, describePayload, makeFinding, type SessionAudit } from './make-finding.js'

/** One `message_conflict_attempt` per recorded conflict. */
export function conflictFindings(audit: SessionAudit, conflicts: readonly ConflictRecord[]): Finding[] {
  return conflicts.map((c) => {
    const where = appendOf(audit, c.messageId)
    const explanation =
      c.reason === 'foreign_session'
        ? `at ${c.detectedAt} a write to this session reused message id ${c.messageId}, which belongs to session ${c.otherSessionId ?? '?'}; it was refused`
        : `at ${c.detectedAt} a write tried to replace the content of message ${c.messageId} (stored ${c.storedHash?.slice(0, 12) ?? '?'}…, incoming ${c.incomingHash.slice(0, 12)}…: ${describePayload(c.incomingPayload)}); it was refused`
    return makeFinding('message_conflict_attempt', audit.sessionId, {
      messageIds: [c.messageId],
      ...where,
      explanation,
      evidence: {
        reason: c.reason,
        storedHash: c.storedHash,
        incomingHash: c.incomingHash,
        otherSessionId: c.otherSessionId,
        detectedAt: c.detectedAt,
      },
    })
  })
}
