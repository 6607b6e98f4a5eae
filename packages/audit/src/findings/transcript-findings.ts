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
  /**
   * The content hash of the item without its empty fields ({@link withoutEmptyFields}); the content
   * hash when it has none. An item matches a revision when either hash is one of the revision's.
   */
  readonly looseHash: string
  readonly payload: Readonly<Record<string, unknown>>
  /**
   * A turnlog message object marked `ephemeral: true` (runtime scaffolding: a "please continue" nudge,
   * an "(empty)" sentinel): never persisted by design, so it is skipped, as `options.live` skips it.
   */
  readonly ephemeral: boolean
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * The payload without its top-level fields set to `null`, and without its empty lists but `content`:
 * what a provider's reply carries for "none" (the `openai` SDK's `refusal: null`, `annotations: []`,
 * vLLM's `tool_calls: null`) and a transcript of what was said leaves out, or the reverse. `undefined`
 * when the payload has no such field (or is not an object).
 */
export function withoutEmptyFields(payload: unknown): Record<string, unknown> | undefined {
  if (!isObject(payload)) return undefined
  const empty = (key: string, value: unknown): boolean =>
    value === null || (key !== 'content' && Array.isArray(value) && value.length === 0)
  if (!Object.entries(payload).some(([key, value]) => empty(key, value))) return undefined
  return Object.fromEntries(Object.entries(payload).filter(([key, value]) => !empty(key, value)))
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
    let ephemeral = false
    if (isObject(item['payload'])) {
      // a serializeMessage object names its message `id`; an export's event line `messageId`
      id = uuidOrNull(item['id'] ?? (item['kind'] === 'event' ? item['messageId'] : undefined))
      payload = item['payload']
      // scaffolding declares itself (an envelope field); a provider message's fields are all content
      ephemeral = item['ephemeral'] === true
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
    let looseHash: string
    try {
      hash = contentHash(payload as ChatMessage)
      const loose = withoutEmptyFields(payload)
      looseHash = loose === undefined ? hash : contentHash(loose as ChatMessage)
    } catch (cause) {
      throw new TurnlogError('INVALID_INPUT', `transcript item #${index} is not JSON data`, { details: { index }, cause })
    }
    return { index, id, contentHash: hash, looseHash, payload, ephemeral }
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
 * The content hashes under which each revision of a message (in order) may be held outside the log:
 * the stored hash (what was written, which a redaction keeps), and for a redacted message also the
 * hash of the revision's redaction placeholder (what the log serves now: `load()`, `toWire`, and a
 * copy of it that lost the stored hash on the way, e.g. through `serializeMessage`). The placeholder
 * is hashed from a copy, not through the payload's memoised hash (the stored one). Used by the
 * `transcript` and `live` checks alike.
 */
export function revisionHashes(audit: SessionAudit, record: MessageRecord): string[][] {
  const redacted = isRedacted(audit, record)
  return record.revisions.map((v) => {
    const hashes = [v.contentHash as string]
    if (!redacted) return hashes
    try {
      const placeholder = contentHash({ payload: structuredClone(v.message.payload) })
      if (placeholder !== hashes[0]) hashes.push(placeholder)
    } catch {
      // a payload that cannot be hashed is matched by its stored hash only
    }
    return hashes
  })
}

/**
 * The content hashes a transcript item may carry to be this message: {@link revisionHashes}, any
 * revision, and each revision's payload without its empty fields ({@link withoutEmptyFields}).
 */
function knownHashes(audit: SessionAudit, record: MessageRecord): Set<string> {
  const hashes = new Set(revisionHashes(audit, record).flat())
  for (const v of record.revisions) {
    try {
      const loose = withoutEmptyFields(v.message.payload)
      if (loose !== undefined) hashes.add(contentHash({ payload: loose }))
    } catch {
      // a payload that cannot be hashed is matched by its stored hash only
    }
  }
  return hashes
}

/** The item's hashes to look up: its content hash, and its hash without empty fields when that differs. */
function itemHashes(item: ExternalMessage): string[] {
  return item.looseHash === item.contentHash ? [item.contentHash] : [item.contentHash, item.looseHash]
}

/**
 * Reconciles an external transcript with the log: `lost_turn` (the transcript has it, the log never
 * stored it), `unexpected_message` (live in the log, absent from the transcript) and `order_mismatch`
 * (shared live messages in another order; compaction summaries excluded). Items with an id are
 * matched by id; items without one by content hash, in order (the first unmatched log message with
 * that content after the previous match). A message the log has but no longer live (rewound,
 * compacted) is not lost, and neither is a redacted one: it matches by its original content (which
 * was stored) and by the redaction placeholder the log serves in its place. Two refinements keep a
 * healthy history clean:
 * - a live message no item matched takes over an item that matched, by content, a message no longer
 *   live with the same content (a retried turn: the rewound attempt and the re-sent message say the
 *   same, and a transcript of what the model sees holds the re-sent one);
 * - in a fork, a message an ancestor compacted before the fork ({@link SessionAudit.inheritedCovered},
 *   which the fork's own log never held) is not lost: it matches by id or content, and makes the
 *   inherited summary that covers it expected, as in the ancestor.
 * Ephemeral items (scaffolding) are skipped.
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
  // messages an ancestor compacted before the fork (not in this log), by content, and those an item matched
  const ancestralByHash = new Map<string, string[]>()
  for (const [id, hash] of audit.inheritedCovered) {
    const ids = ancestralByHash.get(hash)
    if (ids) ids.push(id)
    else ancestralByHash.set(hash, [id])
  }
  const matchedAncestral = new Set<string>()
  const ancestral = (hash: string): string | undefined => ancestralByHash.get(hash)?.find((id) => !matchedAncestral.has(id))
  let cursor = 0

  for (const item of transcript) {
    // scaffolding is sent to the model, never persisted: its absence from the log is no lost turn
    if (item.ephemeral) continue
    let record: MessageRecord | undefined
    if (item.id !== null) {
      record = state.messages.get(item.id as never)
      const ancestralHash = record ? undefined : audit.inheritedCovered.get(item.id)
      if (ancestralHash !== undefined) {
        matchedAncestral.add(item.id)
        if (!itemHashes(item).includes(ancestralHash)) {
          findings.push(
            makeFinding('lost_turn', audit.sessionId, {
              severity: 'error',
              messageIds: [item.id],
              explanation: `transcript item #${item.index}: an ancestor of this fork compacted message ${item.id} but never stored this content (${describePayload(item.payload)}): changed without a revision`,
              evidence: { index: item.index, reason: 'content_not_stored', contentHash: item.contentHash, storedHashes: [ancestralHash] },
            }),
          )
        }
        continue
      }
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
      const held = hashesOf.get(record.id)
      if (!itemHashes(item).some((hash) => held?.has(hash) === true)) {
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
      const inLog = [...new Set(itemHashes(item).flatMap((hash) => byHash.get(hash) ?? []))].sort((a, b) => firstSeq(a) - firstSeq(b))
      const candidates = inLog.filter((r) => !matched.has(r.id))
      record = candidates.find((r) => firstSeq(r) > cursor)
      // before this log's earlier copies: a message an ancestor compacted, which precedes the fork
      const fromAncestor = record === undefined ? (ancestral(item.contentHash) ?? ancestral(item.looseHash)) : undefined
      if (fromAncestor !== undefined) {
        matchedAncestral.add(fromAncestor)
        continue
      }
      record ??= candidates[0]
      if (!record) {
        findings.push(
          lost(
            audit,
            item,
            'not_in_log',
            inLog.length === 0
              ? `transcript item #${item.index} (${describePayload(item.payload)}) is not in the log`
              : `transcript item #${item.index} (${describePayload(item.payload)}) occurs more often in the transcript than the log's ${inLog.length} cop(ies)`,
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
  rematchLiveCopies(audit, state, hashesOf, matched, matches)

  // live messages the transcript lacks; a placed summary is expected when the transcript has what it covers
  const liveIndex = new Map<string, number>(state.live.map((id, i) => [id, i]))
  for (const id of state.live) {
    if (matched.has(id)) continue
    const covered = audit.summaries.get(id)
    if (covered?.some((c) => matched.has(c) || matchedAncestral.has(c))) continue
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

/**
 * Gives each live message no item matched the item that matched, by content only, a message that is
 * no longer live with the same content: a retried turn (a user message rewound with its failed
 * attempt and sent again under a new id) leaves two stored copies, and a transcript of what the model
 * sees holds the live one; the greedy match took the earlier. Of such items, the one matched to the
 * latest copy appended before the live message is taken (the attempt it replaced), else the first.
 * An item that matched by id, or a live message, is never moved: a history transcript that holds both
 * copies keeps both matches; nor is an item moved to a placed summary (a compaction's carried-forward
 * copy of a covered message), which the messages it covers make expected.
 */
function rematchLiveCopies(
  audit: SessionAudit,
  state: SessionState,
  hashesOf: ReadonlyMap<string, ReadonlySet<string>>,
  matched: Map<string, ExternalMessage>,
  matches: { item: ExternalMessage; record: MessageRecord }[],
): void {
  type Match = (typeof matches)[number]
  const firstSeq = (r: MessageRecord): number => r.events[0] ?? 0
  // the movable matches (by content, to a message no longer live), by each of the item's hashes
  const movable = new Map<string, Match[]>()
  for (const m of matches) {
    if (m.item.id !== null || m.record.state === 'live') continue
    for (const hash of itemHashes(m.item)) {
      const list = movable.get(hash)
      if (list) list.push(m)
      else movable.set(hash, [m])
    }
  }
  if (movable.size === 0) return
  for (const id of state.live) {
    const live = state.messages.get(id)
    // a placed summary (a compaction's carried copy too) is expected by what it covers, never moved to
    if (live === undefined || matched.has(id) || audit.summaries.has(id)) continue
    const candidates = [...new Set([...(hashesOf.get(id) ?? [])].flatMap((hash) => movable.get(hash) ?? []))]
    let chosen: Match | undefined
    for (const m of candidates) {
      const seq = firstSeq(m.record)
      if (seq < firstSeq(live) && (chosen === undefined || seq > firstSeq(chosen.record))) chosen = m
    }
    chosen ??= candidates[0]
    if (chosen === undefined) continue
    for (const hash of itemHashes(chosen.item)) {
      const list = movable.get(hash) ?? []
      const at = list.indexOf(chosen)
      if (at >= 0) list.splice(at, 1)
    }
    matched.delete(chosen.record.id)
    matched.set(id, chosen.item)
    chosen.record = live
  }
}

function lost(audit: SessionAudit, item: ExternalMessage, reason: string, explanation: string): Finding {
  return makeFinding('lost_turn', audit.sessionId, {
    messageIds: item.id === null ? [] : [item.id],
    explanation,
    evidence: { index: item.index, reason, contentHash: item.contentHash, role: item.payload['role'] },
  })
}
