import {
  DEFAULT_MESSAGE_FORMAT,
  readingFormat,
  type ChatMessage,
  type MessagePreview,
  type SessionState,
  type StoredEvent,
} from '@turnlog/core'
import { BIDI_CONTROLS } from '../bidi-control.js'
import { FINDING_KINDS, type Finding, type FindingKind, type Severity } from '../audit-report.js'

/** What one session's checks share: its events (read once), their fold and lookups. */
export interface SessionAudit {
  readonly sessionId: string
  /** The session it was forked from, or null: the only session its copies (`data.inheritedFrom`) may name. */
  readonly parentSessionId: string | null
  /** Its tenant, or null: message ids are unique per tenant (`turnlog.message_ids`). */
  readonly tenantId: string | null
  readonly events: readonly StoredEvent[]
  readonly bySeq: ReadonlyMap<number, StoredEvent>
  /** The fold of `events`, or null when the fold itself failed (reported as a `fold_anomaly`). */
  readonly state: SessionState | null
  /** Compaction summaries that were placed, by summary message id: the ids each one covers. */
  readonly summaries: ReadonlyMap<string, readonly string[]>
  /**
   * For a fork: the messages its ancestors compacted before it was forked, covered by a summary it
   * inherited (in {@link summaries}), by id: their content hash. The fork's own log never held them;
   * the `transcript` check matches them (a history transcript holds them). Empty otherwise.
   */
  readonly inheritedCovered: ReadonlyMap<string, string>
}

/** The parts of a finding a check supplies; `severity` defaults to the kind's registry severity. */
export interface FindingParts {
  readonly severity?: Severity
  readonly messageIds?: readonly string[]
  readonly seqs?: readonly number[]
  readonly eventIds?: readonly string[]
  readonly explanation: string
  readonly evidence?: Readonly<Record<string, unknown>>
}

/** Builds a finding: default severity from the registry, seqs sorted, duplicates removed, one-line explanation. */
export function makeFinding(kind: FindingKind, sessionId: string, parts: FindingParts): Finding {
  const seqs = [...new Set(parts.seqs ?? [])].sort((a, b) => a - b)
  const finding: Finding = {
    kind,
    severity: parts.severity ?? FINDING_KINDS[kind].severity,
    sessionId,
    messageIds: [...new Set(parts.messageIds ?? [])],
    seqs,
    eventIds: [...new Set(parts.eventIds ?? [])],
    explanation: oneLine(parts.explanation),
  }
  return parts.evidence === undefined ? finding : { ...finding, evidence: parts.evidence }
}

/** The seq where a message entered the log, and that event's id. */
export function appendOf(audit: SessionAudit, messageId: string): { seqs: number[]; eventIds: string[] } {
  const seq = audit.state?.messages.get(messageId as never)?.events[0]
  if (seq === undefined) return { seqs: [], eventIds: [] }
  const event = audit.bySeq.get(seq)
  return { seqs: [seq], eventIds: event ? [event.eventId] : [] }
}

/** Seqs and event ids of where several messages entered the log. */
export function appendsOf(audit: SessionAudit, messageIds: readonly string[]): { seqs: number[]; eventIds: string[] } {
  const seqs: number[] = []
  const eventIds: string[] = []
  for (const id of messageIds) {
    const a = appendOf(audit, id)
    seqs.push(...a.seqs)
    eventIds.push(...a.eventIds)
  }
  return { seqs, eventIds }
}

/**
 * Collapses any line break or control character into one space (explanations are one line), and
 * escapes every bidi control (Unicode's Bidi_Control: embeddings, overrides, isolates, the marks LRM,
 * RLM and ALM) as `\uXXXX`, so a quoted payload or tool call id cannot reorder how an explanation
 * displays wherever it is shown (a terminal, the inspect page's tooltips, a log viewer).
 */
export function oneLine(text: string): string {
  return (
    text
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ')
      .replace(BIDI_CONTROLS, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`)
      .trim()
  )
}

/**
 * A short, safe quote of a message for an explanation: role and the start of its text, with control
 * characters, NUL and lone surrogates escaped (JSON string escaping), at most `max` characters.
 */
export function describePayload(payload: ChatMessage | Readonly<Record<string, unknown>>, max = 48, format?: string): string {
  if (format !== undefined && format !== DEFAULT_MESSAGE_FORMAT) {
    const preview = previewOf({ payload, format })
    const text = preview.text.length > max ? `${preview.text.slice(0, max)}…` : preview.text
    return `${format} ${preview.kind === preview.role ? preview.role : `${preview.role} ${preview.kind}`} ${quote(text)}`
  }
  const role = typeof payload['role'] === 'string' ? payload['role'] : '?'
  const content = payload['content']
  let text: string
  if (typeof content === 'string') text = content
  else if (Array.isArray(content)) {
    // an external transcript's parts are not validated: any of them may be null or a primitive
    text = content
      .map((p: unknown) => {
        const part = typeof p === 'object' && p !== null ? (p as { text?: unknown; type?: unknown }) : {}
        return typeof part.text === 'string' ? part.text : `[${typeof part.type === 'string' ? part.type : 'part'}]`
      })
      .join(' ')
  } else text = ''
  const calls = Array.isArray(payload['tool_calls']) ? ` +${payload['tool_calls'].length} tool call(s)` : ''
  const answered =
    typeof payload['tool_call_id'] === 'string'
      ? ` for ${payload['tool_call_id']}`
      : typeof payload['call_id'] === 'string'
        ? ` for ${payload['call_id']}`
        : ''
  const cut = text.length > max ? `${text.slice(0, max)}…` : text
  return `${role}${answered} ${quote(cut)}${calls}`
}

/**
 * What a message's format shows of it (role, kind, text); a format whose preview throws (an
 * application's own) shows `?`, so one bad format never stops an audit.
 */
export function previewOf(message: { readonly payload: unknown; readonly format?: string }): MessagePreview {
  try {
    return readingFormat(message.format).preview(message.payload)
  } catch {
    return { role: '?', kind: '?', text: '' }
  }
}

/** JSON string escaping plus U+2028/2029, so a quote never breaks a line or a terminal. */
export function quote(text: string): string {
  return JSON.stringify(text)
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029')
}
