import type { Finding, FindingKind } from '../audit-report.js'
import type { ChainBreakKind, ChainVerification } from '../verify-chain.js'
import { makeFinding, type SessionAudit } from './make-finding.js'

/** The finding kind of each chain break kind. */
const KIND_OF: Readonly<Record<ChainBreakKind, FindingKind>> = {
  hash_mismatch: 'chain_break',
  content_hash_mismatch: 'content_hash_mismatch',
  seq_gap: 'seq_gap',
  missing_genesis: 'seq_gap',
  seq_duplicate: 'seq_duplicate',
  truncated: 'truncated_log',
  version_mismatch: 'version_mismatch',
  redaction_mismatch: 'chain_break',
}

/** One finding per chain break (check group `chain`). */
export function chainFindings(audit: SessionAudit, verification: ChainVerification): Finding[] {
  return verification.breaks.map((b) => {
    const event = b.eventId === null ? undefined : audit.events.find((e) => e.eventId === b.eventId)
    const evidence: Record<string, unknown> = { break: b.kind }
    if (b.expected !== undefined) evidence['expected'] = b.expected
    if (b.actual !== undefined) evidence['actual'] = b.actual
    if (event) evidence['type'] = event.type
    return makeFinding(KIND_OF[b.kind], audit.sessionId, {
      messageIds: event?.messageId ? [event.messageId] : [],
      seqs: [b.seq],
      eventIds: b.eventId === null ? [] : [b.eventId],
      explanation: b.explanation,
      evidence,
    })
  })
}
