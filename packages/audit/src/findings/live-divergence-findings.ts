import { contentHash, toMessage, type Message, type MessageRecord, type SessionState } from '@turnlog/core'
import type { Finding } from '../audit-report.js'
import { appendOf, describePayload, makeFinding, type SessionAudit } from './make-finding.js'
import { outOfOrder } from './out-of-order.js'
import { revisionHashes } from './transcript-findings.js'

/**
 * `live_divergence`: compares the agent's in-memory list (ephemeral scaffolding skipped) with the
 * fold's live view. `evidence.reason` says which case: `not_in_log` (never written: an unflushed turn),
 * `not_live_in_log` (the log rewound or compacted it, the agent still sends it), `content_differs`
 * (edited in memory without revise(), or an older revision), `not_in_memory` (the agent dropped a
 * message the log still has live; warning), `order` (shared messages in another order) and
 * `duplicate_in_memory` (one message, by id, held more than once: its later copies). A redacted
 * message matches by its original content or by the redaction placeholder the log serves in its place
 * ({@link revisionHashes}), as in the `transcript` check.
 */
export function liveDivergenceFindings(audit: SessionAudit, state: SessionState, memory: readonly Message[]): Finding[] {
  const findings: Finding[] = []
  const list = memory.map((m) => toMessage(m)).filter((m) => m.ephemeral !== true)
  const inMemory = new Set<string>(list.map((m) => m.id))
  const liveIndex = new Map<string, number>(state.live.map((id, i) => [id, i]))
  const shared: { id: string; memoryIndex: number; livePosition: number }[] = []

  const firstIndex = new Map<string, number>()
  list.forEach((m, memoryIndex) => {
    const r: MessageRecord | undefined = state.messages.get(m.id)
    const what = `${describePayload(m.payload)} (message ${m.id}, in-memory position ${memoryIndex})`
    // the same message (one id: a copy of it) again: the model is sent it twice, the log holds it once
    const first = firstIndex.get(m.id)
    if (first !== undefined) {
      findings.push(
        diverge(
          audit,
          m.id,
          'error',
          'duplicate_in_memory',
          `${what} is in memory again (first at position ${first}): the model sees it twice, the log holds it once`,
          { memoryIndex, firstMemoryIndex: first },
        ),
      )
      return
    }
    firstIndex.set(m.id, memoryIndex)
    if (!r) {
      findings.push(
        diverge(audit, m.id, 'error', 'not_in_log', `${what} is in memory but not in the log: not flushed, or its write failed`, {
          memoryIndex,
        }),
      )
      return
    }
    if (r.state !== 'live') {
      findings.push(
        diverge(
          audit,
          m.id,
          'error',
          'not_live_in_log',
          `${what} is in memory but ${r.state} in the log (seq ${r.events[r.events.length - 1] ?? '?'}): the agent still sends it`,
          { memoryIndex, logState: r.state },
        ),
      )
      return
    }
    const hash = contentHash(m)
    const current = r.revisions[r.revisions.length - 1]?.contentHash
    // a redacted message may be held as the placeholder the log serves now (revisionHashes)
    const held = revisionHashes(audit, r)
    if (held[held.length - 1]?.includes(hash) !== true) {
      const older = held.findIndex((hashes) => hashes.includes(hash))
      findings.push(
        diverge(
          audit,
          m.id,
          'error',
          'content_differs',
          older >= 0
            ? `${what} holds revision ${older}; the log's current content is revision ${r.revisions.length - 1}`
            : `${what} has content the log never stored: changed in memory without revise(), the log keeps the old bytes`,
          { memoryIndex, memoryHash: hash, logHash: current ?? null, ...(older >= 0 ? { memoryRevision: older } : {}) },
        ),
      )
    }
    shared.push({ id: m.id, memoryIndex, livePosition: liveIndex.get(m.id) as number })
  })

  for (const id of state.live) {
    if (inMemory.has(id)) continue
    const r = state.messages.get(id)
    if (!r) continue
    findings.push(
      diverge(
        audit,
        id,
        'warning',
        'not_in_memory',
        `live message ${id} (${describePayload(r.message.payload)}, live position ${liveIndex.get(id) ?? '?'}) is not in memory: the agent dropped it, the model no longer sees it`,
        { livePosition: liveIndex.get(id) ?? null },
      ),
    )
  }

  const positions = shared.map((s) => s.livePosition)
  for (const i of [...outOfOrder(positions)].sort((a, b) => a - b)) {
    const s = shared[i]
    if (!s) continue
    findings.push(
      diverge(
        audit,
        s.id,
        'error',
        'order',
        `message ${s.id} is at in-memory position ${s.memoryIndex} but live position ${s.livePosition}: out of order relative to the others`,
        { memoryIndex: s.memoryIndex, livePosition: s.livePosition },
      ),
    )
  }
  return findings
}

function diverge(
  audit: SessionAudit,
  id: string,
  severity: 'warning' | 'error',
  reason: string,
  explanation: string,
  evidence: Record<string, unknown>,
): Finding {
  return makeFinding('live_divergence', audit.sessionId, {
    severity,
    messageIds: [id],
    ...appendOf(audit, id),
    explanation,
    evidence: { reason, ...evidence },
  })
}
