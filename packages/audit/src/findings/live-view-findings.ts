import {
  DEFAULT_MESSAGE_FORMAT,
  contentHash,
  isRedactedPayload,
  liveMessages,
  readingFormat,
  toolPairing,
  type ChatMessage,
  type Message,
  type MessageRecord,
  type SessionState,
} from '@turnlog/core'
import type { Finding, Severity } from '../audit-report.js'
import { appendOf, appendsOf, describePayload, makeFinding, previewOf, type SessionAudit } from './make-finding.js'

/**
 * Tool-call pairing of the fold's live view, each message read by its format: `unanswered_tool_call`,
 * `orphan_tool_result`, `duplicate_tool_result`, `duplicate_tool_call`, `reused_tool_call_id`. Each
 * finding's evidence names the `format` of the message it is about (for a duplicate: of the first
 * result, or the first call; for a reused id: of the first call).
 */
export function pairingFindings(audit: SessionAudit, state: SessionState): Finding[] {
  const live = liveMessages(state)
  const formats = new Map<string, string>(live.map((m) => [m.id, m.format]))
  const formatOf = (id: string): string => formats.get(id) ?? DEFAULT_MESSAGE_FORMAT
  const speaker = (id: string, chat: string): string => (formatOf(id) === DEFAULT_MESSAGE_FORMAT ? chat : `${formatOf(id)} message`)
  const pairing = toolPairing(live)
  const findings: Finding[] = []
  for (const u of pairing.unanswered) {
    findings.push(
      makeFinding('unanswered_tool_call', audit.sessionId, {
        messageIds: [u.messageId],
        ...appendOf(audit, u.messageId),
        explanation: `tool call ${u.toolCallId} of ${speaker(u.messageId, 'assistant message')} ${u.messageId} has no result in the live view`,
        evidence: { toolCallId: u.toolCallId, format: formatOf(u.messageId) },
      }),
    )
  }
  for (const o of pairing.orphans) {
    findings.push(
      makeFinding('orphan_tool_result', audit.sessionId, {
        messageIds: [o.messageId],
        ...appendOf(audit, o.messageId),
        explanation: `tool result ${o.messageId}${formatOf(o.messageId) === DEFAULT_MESSAGE_FORMAT ? '' : ` (${formatOf(o.messageId)})`} answers ${o.toolCallId}, which no earlier live ${formatOf(o.messageId) === DEFAULT_MESSAGE_FORMAT ? 'assistant message' : 'message'} calls`,
        evidence: { toolCallId: o.toolCallId, format: formatOf(o.messageId) },
      }),
    )
  }
  for (const d of pairing.duplicates) {
    findings.push(
      makeFinding('duplicate_tool_result', audit.sessionId, {
        messageIds: d.messageIds,
        ...appendsOf(audit, d.messageIds),
        explanation: `tool call ${d.toolCallId} has ${d.messageIds.length} live results`,
        evidence: { toolCallId: d.toolCallId, format: formatOf(d.messageIds[0] ?? '') },
      }),
    )
  }
  for (const d of pairing.duplicateCalls) {
    // a message that makes the call twice is named once
    const messageIds = [...new Set(d.messageIds)]
    const first = messageIds[0] ?? ''
    const where = messageIds.length === 1 ? `in ${speaker(first, 'assistant message')} ${first}` : `by ${messageIds.length} live messages`
    findings.push(
      makeFinding('duplicate_tool_call', audit.sessionId, {
        messageIds,
        ...appendsOf(audit, messageIds),
        explanation: `tool call ${d.toolCallId} is made ${d.messageIds.length} times ${where}`,
        evidence: { toolCallId: d.toolCallId, calls: d.messageIds.length, format: formatOf(first) },
      }),
    )
  }
  for (const r of pairing.reusedCalls) {
    const first = r.messageIds[0] ?? ''
    findings.push(
      makeFinding('reused_tool_call_id', audit.sessionId, {
        messageIds: r.messageIds,
        ...appendsOf(audit, r.messageIds),
        explanation: `tool call id ${r.toolCallId} is used for ${r.messageIds.length} calls, each after the previous one's result`,
        evidence: { toolCallId: r.toolCallId, calls: r.messageIds.length, format: formatOf(first) },
      }),
    )
  }
  return findings
}

/** The current content hash of a record (the stored hash of its latest revision). */
function currentHash(r: MessageRecord): string {
  return r.revisions[r.revisions.length - 1]?.contentHash ?? ''
}

/**
 * The fields of an OpenAI chat message that say what was said: the speaker, the content (a refusal and
 * an audio reply are content too), the calls it makes (`function_call`: the legacy form), the call it
 * answers, and the name. What a runtime keeps beside them (bookkeeping, reasoning text, a finish
 * reason) is not.
 */
const CONVERSATION_FIELDS = [
  'role',
  'content',
  'refusal',
  'audio',
  'tool_calls',
  'function_call',
  'tool_call_id',
  'call_id',
  'name',
] as const

/**
 * What makes two live messages copies of one: for an OpenAI chat message its conversation
 * ({@link CONVERSATION_FIELDS}), so fields a runtime keeps beside them (hermes'
 * bookkeeping under `hermes`, which a re-insert drops: #92231) do not hide a copy; for every other
 * format, and for a redacted message (whose placeholder two messages may share), the content hash.
 */
function copyKey(r: MessageRecord): string {
  const hash = currentHash(r)
  const { format, payload } = r.message
  if (format !== DEFAULT_MESSAGE_FORMAT || isRedactedPayload(payload, format)) return hash
  const p = payload as ChatMessage & { readonly [key: string]: unknown }
  const conversation = Object.fromEntries(CONVERSATION_FIELDS.map((key) => [key, p[key] ?? null]))
  return `chat:${contentHash({ payload: conversation })}`
}

/**
 * `live_duplicate_copy`: one finding per content that is live under more than one id (see
 * {@link copyKey}). Only the live view counts, so a compaction's carried-forward copy (original
 * compacted, copy live) is not one.
 */
export function duplicateFindings(audit: SessionAudit, state: SessionState): Finding[] {
  const groups = new Map<string, MessageRecord[]>()
  for (const id of state.live) {
    const r = state.messages.get(id)
    if (!r) continue
    const key = copyKey(r)
    const group = groups.get(key)
    if (group) group.push(r)
    else groups.set(key, [r])
  }
  const findings: Finding[] = []
  for (const group of groups.values()) {
    if (group.length < 2) continue
    const first = group[0] as MessageRecord
    const message = first.message
    const hash = currentHash(first)
    const ids = group.map((r) => r.id as string)
    findings.push(
      makeFinding('live_duplicate_copy', audit.sessionId, {
        severity: duplicateSeverity(message),
        messageIds: ids,
        ...appendsOf(audit, ids),
        explanation: `the same ${describePayload(message.payload, 48, message.format)} is live ${group.length} times under different ids: a re-inserted transcript or a redelivery`,
        evidence: { contentHash: hash, copies: group.length, role: previewOf(message).role, format: message.format },
      }),
    )
  }
  return findings
}

/** A copy of a tool call, a tool result or a system prompt cannot be a legitimate repeat. */
function duplicateSeverity(message: Message): Severity {
  const format = readingFormat(message.format)
  try {
    return format.toolCalls(message.payload).length > 0 ||
      format.toolResults(message.payload).length > 0 ||
      previewOf(message).role === 'system'
      ? 'error'
      : 'warning'
  } catch {
    return 'warning'
  }
}

/**
 * `consecutive_user_messages`: one finding per run of user messages in the live view with no
 * assistant message between them. A placed compaction summary ends a run (it stands for the replies
 * it replaced); system, developer and tool messages do not.
 */
export function turnFindings(audit: SessionAudit, state: SessionState): Finding[] {
  const findings: Finding[] = []
  let run: string[] = []
  const close = (): void => {
    if (run.length > 1) {
      findings.push(
        makeFinding('consecutive_user_messages', audit.sessionId, {
          messageIds: run,
          ...appendsOf(audit, run),
          explanation: `${run.length} user messages in a row with no assistant reply between them: ${run.length - 1} reply(ies) lost, or a redelivered message`,
          evidence: { count: run.length },
        }),
      )
    }
    run = []
  }
  for (const id of state.live) {
    const r = state.messages.get(id)
    if (!r) continue
    if (audit.summaries.has(id)) close()
    else if (previewOf(r.message).role === 'user') run.push(id)
    else if (previewOf(r.message).role === 'assistant') close()
  }
  close()
  return findings
}

/** `partial_never_finalized`: one finding per live message still marked partial. */
export function partialFindings(audit: SessionAudit, state: SessionState): Finding[] {
  const findings: Finding[] = []
  for (const id of state.live) {
    const r = state.messages.get(id)
    if (!r?.partial) continue
    const latest = r.revisions[r.revisions.length - 1]
    const event = latest === undefined ? undefined : audit.bySeq.get(latest.seq)
    findings.push(
      makeFinding('partial_never_finalized', audit.sessionId, {
        messageIds: [id],
        seqs: latest === undefined ? [] : [latest.seq],
        eventIds: event ? [event.eventId] : [],
        explanation: `${describePayload(r.message.payload, 48, r.message.format)} (message ${id}) is still partial: its stream was never finalized`,
        evidence: { lastWrittenAt: event?.recordedAt ?? null, revision: r.revisions.length - 1 },
      }),
    )
  }
  return findings
}
