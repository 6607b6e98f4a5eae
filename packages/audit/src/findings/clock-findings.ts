import type { Finding } from '../audit-report.js'
import { makeFinding, type SessionAudit } from './make-finding.js'

const ISO = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2})(?:\.(\d{1,9}))?(Z|[+-]\d{2}:\d{2})$/

/**
 * An ISO-8601 timestamp as nanoseconds since the epoch, exact to the nanosecond (`Date.parse` keeps
 * milliseconds only, and hermes writes microseconds), or null when it is not one.
 */
export function timestampNanos(text: unknown): bigint | null {
  if (typeof text !== 'string') return null
  const m = ISO.exec(text)
  if (m === null) return null
  const ms = Date.parse(`${m[1] as string}${m[3] as string}`)
  if (Number.isNaN(ms)) return null
  return BigInt(ms) * 1_000_000n + BigInt((m[2] ?? '').padEnd(9, '0'))
}

/**
 * One `clock_regression` per message whose `createdAt` is earlier than that of the message entered
 * just before it in log (seq) order: the writer's wall clock went backwards, messages were
 * timestamped by several clocks, or a message created earlier was appended later (two writers racing
 * on one session, a message held back before its append). Only `message_appended` events count (a message entering the log:
 * appends and compaction summaries); revisions keep the message's createdAt, and a fork's inherited
 * copies are skipped (they follow the parent's live order, where a compaction summary stands before
 * older messages; the parent's own audit checks their times). Timestamps that do not parse are skipped.
 */
export function clockFindings(audit: SessionAudit): Finding[] {
  const findings: Finding[] = []
  let previous: { seq: number; eventId: string; messageId: string; createdAt: string; nanos: bigint } | null = null
  for (const e of audit.events) {
    if (e.type !== 'message_appended' || (e.data as { inheritedFrom?: unknown }).inheritedFrom !== undefined) continue
    const createdAt = (e.data as { createdAt?: unknown }).createdAt
    const nanos = timestampNanos(createdAt)
    if (nanos === null) continue
    const current = { seq: e.seq, eventId: e.eventId, messageId: e.messageId, createdAt: createdAt as string, nanos }
    if (previous !== null && nanos < previous.nanos) {
      const backwardsMs = Number(previous.nanos - nanos) / 1e6
      findings.push(
        makeFinding('clock_regression', audit.sessionId, {
          messageIds: [previous.messageId, current.messageId],
          seqs: [previous.seq, current.seq],
          eventIds: [previous.eventId, current.eventId],
          explanation: `message ${current.messageId} (seq ${current.seq}) was created at ${current.createdAt}, ${backwardsMs} ms before message ${previous.messageId} (seq ${previous.seq}, ${previous.createdAt}), which the log holds before it: a clock went backwards, or the later-created message was appended first (writers racing on the session, a message held back before its append)`,
          evidence: {
            previous: { messageId: previous.messageId, seq: previous.seq, createdAt: previous.createdAt },
            message: { messageId: current.messageId, seq: current.seq, createdAt: current.createdAt },
            backwardsMs,
          },
        }),
      )
    }
    previous = current
  }
  return findings
}
