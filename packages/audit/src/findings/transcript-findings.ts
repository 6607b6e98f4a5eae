import { TurnlogError, contentHash, parseMessageId, type ChatMessage, type MessageRecord, type SessionState } from '@turnlog/core'
import type { Finding } from '../audit-report.js'
import { appendOf, describePayload, makeFinding, previewOf, type SessionAudit } from './make-finding.js'
import { outOfOrder } from './out-of-order.js'

/** One message of an external transcript, normalised. */
export interface ExternalMessage {
  /** Position in the transcript (0-based). */
  readonly index: number
  /** The turnlog message id, when the item carries one (a UUID). */
  readonly id: string | null
  readonly contentHash: string
  readonly payload: Readonly<Record<string, unknown>>
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function uuidOrNull(value: unknown): string | null {
  try {
    return parseMessageId(value)
  } catch {
    return null
  }
}

/**
 * Normalises the items of an external transcript. Accepted forms, per item:
 * - a turnlog message object `{ id, payload, … }` (a `serializeMessage` object; an export's message event
 *   line, whose id is its `messageId`), or its JSON text;
 * - a provider message `{ role, content, … }`; an `id` field on it is an envelope field: used as the
 *   message id when it is a UUID, and never part of the hashed content.
 * Anything else throws `INVALID_INPUT` naming the item.
 */
export function parseTranscript(items: readonly unknown[]): ExternalMessage[] {
  if (!Array.isArray(items)) throw new TurnlogError('INVALID_INPUT', 'transcript must be an array')
  // Array.from, not map: map skips the holes of a sparse array and would leave them in the result
  return Array.from(items, (raw: unknown, index) => {
    let item = raw
    if (typeof item === 'string') {
      try {
        item = JSON.parse(item) as unknown
      } catch (cause) {
        throw new TurnlogError('INVALID_INPUT', `transcript item #${index} is a string but not JSON`, { details: { index }, cause })
      }
    }
    if (!isObject(item)) throw new TurnlogError('INVALID_INPUT', `transcript item #${index} is not an object`, { details: { index } })
    let id: string | null
    let payload: Record<string, unknown>
    if (isObject(item['payload'])) {
      // a serializeMessage object names its message `id`; an export's event line `messageId`
      id = uuidOrNull(item['id'] ?? (item['kind'] === 'event' ? item['messageId'] : undefined))
      payload = item['payload']
    } else if (typeof item['role'] === 'string') {
      id = uuidOrNull(item['id'])
      const { id: _envelopeId, ...rest } = item
      payload = rest
    } else {
      throw new TurnlogError(
        'INVALID_INPUT',
        `transcript item #${index} is neither a message ({ role, … }) nor a turnlog message ({ id, payload })`,
        {
          details: { index },
        },
      )
    }
    if (typeof payload['role'] !== 'string') {
      throw new TurnlogError('INVALID_INPUT', `transcript item #${index} has no role`, { details: { index } })
    }
    let hash: string
    try {
      hash = contentHash(payload as ChatMessage)
    } catch (cause) {
      throw new TurnlogError('INVALID_INPUT', `transcript item #${index} is not JSON data`, { details: { index }, cause })
    }
    return { index, id, contentHash: hash, payload }
  })
}

/** True when a redaction scrubbed the message: a `message_redacted` event, a scrubbed payload or a fork's copy of one. */
function isRedacted(audit: SessionAudit, record: MessageRecord): boolean {
  return record.events.some((seq) => {
    const e = audit.bySeq.get(seq)
    if (e === undefined) return false
    if (e.type === 'message_redacted' || e.payloadDigest !== undefined) return true
    return (e.type === 'message_appended' || e.type === 'message_revised') && e.data.redacted === true
  })
}

/**
 * The content hashes a transcript item may carry to be this message: the stored hash of every
 * revision (what was written, which a redaction keeps), and for a redacted message also the hash of
 * each revision's redaction placeholder (what the log serves now: `load()`, `toWire`). The placeholder
 * is hashed from a copy, not through the payload's memoised hash (the stored one).
 */
function knownHashes(audit: SessionAudit, record: MessageRecord): Set<string> {
  const hashes = new Set<string>(record.revisions.map((v) => v.contentHash as string))
  if (!isRedacted(audit, record)) return hashes
  for (const v of record.revisions) {
    try {
      hashes.add(contentHash({ payload: structuredClone(v.message.payload) }))
    } catch {
      // a payload that cannot be hashed is matched by its stored hash only
    }
  }
  return hashes
}

/**
 * Reconciles an external transcript with the log: `lost_turn` (the transcript has it, the log never
 * stored it), `unexpected_message` (live in the log, absent from the transcript) and `order_mismatch`
 * (shared live messages in another order; compaction summaries excluded). Items with an id are
 * matched by id; items without one by content hash, in order (the first unmatched log message with
 * that content after the previous match). A message the log has but no longer live (rewound,
 * compacted) is not lost, and neither is a redacted one: it matches by its original content (which
 * was stored) and by the redaction placeholder the log serves in its place.
 */
export function transcriptFindings(audit: SessionAudit, state: SessionState, transcript: readonly ExternalMessage[]): Finding[] {
  const findings: Finding[] = []
  const byHash = new Map<string, MessageRecord[]>()
  const hashesOf = new Map<string, Set<string>>()
  for (const r of state.messages.values()) {
    const hashes = knownHashes(audit, r)
    hashesOf.set(r.id, hashes)
    for (const hash of hashes) {
      const list = byHash.get(hash)
      if (list) list.push(r)
      else byHash.set(hash, [r])
    }
  }
  const firstSeq = (r: MessageRecord): number => r.events[0] ?? 0
  const matched = new Map<string, ExternalMessage>()
  const matches: { item: ExternalMessage; record: MessageRecord }[] = []
  let cursor = 0

  for (const item of transcript) {
    let record: MessageRecord | undefined
    if (item.id !== null) {
      record = state.messages.get(item.id as never)
      if (!record) {
        findings.push(
          lost(
            audit,
            item,
            'not_in_log',
            `transcript item #${item.index} (${describePayload(item.payload)}, id ${item.id}) is not in the log`,
          ),
        )
        continue
      }
      if (hashesOf.get(record.id)?.has(item.contentHash) !== true) {
        findings.push(
          makeFinding('lost_turn', audit.sessionId, {
            severity: 'error',
            messageIds: [item.id],
            ...appendOf(audit, item.id),
            explanation: `transcript item #${item.index}: the log has message ${item.id} but never stored this content (${describePayload(item.payload)}): changed without a revision`,
            evidence: {
              index: item.index,
              reason: 'content_not_stored',
              contentHash: item.contentHash,
              storedHashes: record.revisions.map((v) => v.contentHash),
            },
          }),
        )
      }
    } else {
      const candidates = (byHash.get(item.contentHash) ?? []).filter((r) => !matched.has(r.id))
      record = candidates.find((r) => firstSeq(r) > cursor) ?? candidates[0]
      if (!record) {
        const inLog = byHash.get(item.contentHash)?.length ?? 0
        findings.push(
          lost(
            audit,
            item,
            'not_in_log',
            inLog === 0
              ? `transcript item #${item.index} (${describePayload(item.payload)}) is not in the log`
              : `transcript item #${item.index} (${describePayload(item.payload)}) occurs more often in the transcript than the log's ${inLog} cop(ies)`,
          ),
        )
        continue
      }
    }
    if (matched.has(record.id)) continue // the same message twice in the transcript: matched once
    matched.set(record.id, item)
    matches.push({ item, record })
    cursor = Math.max(cursor, firstSeq(record))
  }

  // live messages the transcript lacks; a placed summary is expected when the transcript has what it covers
  const liveIndex = new Map<string, number>(state.live.map((id, i) => [id, i]))
  for (const id of state.live) {
    if (matched.has(id)) continue
    const covered = audit.summaries.get(id)
    if (covered?.some((c) => matched.has(c))) continue
    const r = state.messages.get(id)
    if (!r) continue
    const role = previewOf(r.message).role
    findings.push(
      makeFinding('unexpected_message', audit.sessionId, {
        severity: role === 'system' || role === 'developer' ? 'info' : 'error',
        messageIds: [id],
        ...appendOf(audit, id),
        explanation: `live message ${id} (${describePayload(r.message.payload, 48, r.message.format)}) is not in the transcript`,
        evidence: { livePosition: liveIndex.get(id) ?? null, role },
      }),
    )
  }

  // order of the messages both have live; a placed summary is left out: the log puts it where the
  // first message it covers was, a history transcript where the compaction happened
  const shared = matches.filter((m) => liveIndex.has(m.record.id) && !audit.summaries.has(m.record.id))
  const positions = shared.map((m) => liveIndex.get(m.record.id) as number)
  for (const i of [...outOfOrder(positions)].sort((a, b) => a - b)) {
    const m = shared[i]
    if (!m) continue
    findings.push(
      makeFinding('order_mismatch', audit.sessionId, {
        messageIds: [m.record.id],
        ...appendOf(audit, m.record.id),
        explanation: `message ${m.record.id} (${describePayload(m.record.message.payload)}) is transcript item #${m.item.index} but live position ${positions[i] ?? '?'}: out of order relative to the others`,
        evidence: { index: m.item.index, livePosition: positions[i] ?? null },
      }),
    )
  }
  return findings
}

function lost(audit: SessionAudit, item: ExternalMessage, reason: string, explanation: string): Finding {
  return makeFinding('lost_turn', audit.sessionId, {
    messageIds: item.id === null ? [] : [item.id],
    explanation,
    evidence: { index: item.index, reason, contentHash: item.contentHash, role: item.payload['role'] },
  })
}
