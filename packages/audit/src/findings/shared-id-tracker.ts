import type { Finding } from '../audit-report.js'
import { makeFinding, type SessionAudit } from './make-finding.js'

/**
 * Remembers which session first appended each message id, across the sessions of one
 * `{ all: true }` audit, to find an id appended in two sessions without a fork (`shared_message_id`).
 * A copy (`data.inheritedFrom`) counts as an append unless it names the session's fork parent. Ids are
 * unique per tenant (the key of `turnlog.message_ids`): two tenants may hold the same id.
 * The database refuses a second session's claim of an id (`turnlog.message_ids`), so what this finds
 * went around that check: a raw event labelled a copy, a log written before the check existed or with
 * its trigger disabled. Only a pass over every session finds them.
 * Memory: one entry per message id of the store (about 100 bytes each).
 */
export class SharedIdTracker {
  /** By tenant scope and message id (`turnlog.message_ids`' key): the index of the first session. */
  readonly #firstSession = new Map<string, number>()
  readonly #sessions: string[] = []

  /** Records the session's own appends and reports ids another audited session appended first. */
  check(audit: SessionAudit): Finding[] {
    const index = this.#sessions.length
    this.#sessions.push(audit.sessionId)
    const findings: Finding[] = []
    const scope = audit.tenantId === null ? '' : `=${audit.tenantId}`
    for (const e of audit.events) {
      if (e.type !== 'message_appended') continue
      // a fork's copy names the parent; a "copy" naming another session (written around the store: the
      // database claims no id for it) puts the id into this session as an append would
      if (e.data.inheritedFrom !== undefined && e.data.inheritedFrom === audit.parentSessionId) continue
      const key = `${e.messageId}\u0000${scope}`
      const first = this.#firstSession.get(key)
      if (first === undefined) {
        this.#firstSession.set(key, index)
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
