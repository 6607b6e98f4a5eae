import type { Finding } from '../audit-report.js'
import { describePayload, makeFinding, type SessionAudit } from './make-finding.js'

/** How many retracted messages an explanation quotes. */
const QUOTED = 3

/**
 * One `sync_retraction` (info) per `messages_retracted` event that `sync` wrote (`data.sync: true`):
 * messages that left the live list because the caller's list no longer held them, not because a
 * rewind was asked for. It names the retracted ids and the version the retraction made; the
 * explanation quotes the first few (from the fold, when the log can be folded).
 */
export function syncFindings(audit: SessionAudit): Finding[] {
  const findings: Finding[] = []
  for (const e of audit.events) {
    if (e.type !== 'messages_retracted') continue
    // read defensively: a malformed event is the fold's to report, not a reason to fail the audit
    const data = e.data as { sync?: unknown; ids?: unknown }
    if (data.sync !== true) continue
    const ids = Array.isArray(data.ids) ? data.ids.filter((id): id is string => typeof id === 'string') : []
    const quoted = ids.slice(0, QUOTED).map((id) => {
      const message = audit.state?.messages.get(id as never)?.message
      return message === undefined
        ? id
        : `${id} (${describePayload(message.payload as Readonly<Record<string, unknown>>, 48, message.format)})`
    })
    const more = ids.length > QUOTED ? ` and ${ids.length - QUOTED} more` : ''
    findings.push(
      makeFinding('sync_retraction', audit.sessionId, {
        messageIds: ids,
        seqs: [e.seq],
        eventIds: [e.eventId],
        explanation: `sync retracted ${ids.length} message(s) at version ${e.seq} because the caller's list no longer held them (not a rewind): ${quoted.join(', ')}${more}`,
        evidence: { version: e.seq, retracted: ids },
      }),
    )
  }
  return findings
}
