import type { Finding } from '../audit-report.js'
import { makeFinding, type SessionAudit } from './make-finding.js'

/**
 * Remembers which session first appended each message id, across the sessions of one
 * `{ all: true }` audit, to find an id appended in two sessions without a fork (`shared_message_id`).
 * Two writers inserting the same new id into two sessions in the same instant can both succeed (no
 * global unique key: every key includes the session), so only a pass over every session finds them.
 * Memory: one entry per message id of the store (about 100 bytes each).
 */
export class SharedIdTracker {
  readonly #firstSession = new Map<string, number>()
  readonly #sessions: string[] = []

  /** Records the session's own appends and reports ids another audited session appended first. */
  check(audit: SessionAudit): Finding[] {
    const index = this.#sessions.length
    this.#sessions.push(audit.sessionId)
    const findings: Finding[] = []
    for (const e of audit.events) {
      if (e.type !== 'message_appended' || e.data.inheritedFrom !== undefined) continue
      const first = this.#firstSession.get(e.messageId)
      if (first === undefined) {
        this.#firstSession.set(e.messageId, index)
        continue
      }
      if (first === index) continue // a duplicate append in one session is a fold anomaly
      const other = this.#sessions[first] ?? '?'
      findings.push(
        makeFinding('shared_message_id', audit.sessionId, {
          messageIds: [e.messageId],
          seqs: [e.seq],
          eventIds: [e.eventId],
          explanation: `message ${e.messageId} was appended here (seq ${e.seq}) and in session ${other}, which this session was not forked from`,
          evidence: { otherSessionId: other, contentHash: e.contentHash },
        }),
      )
    }
    return findings
  }
}
