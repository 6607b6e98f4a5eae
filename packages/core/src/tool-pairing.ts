import type { ChatMessage } from './chat-message.js'
import type { MessageId } from './ids.js'
import { contentHash } from './content-hash.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

function checkPayload(payload: unknown, what: string): void {
  if (typeof payload !== 'object' || payload === null) {
    throw new TurnlogError('INVALID_INPUT', `${what} needs a provider payload object`, { details: { field: 'payload' } })
  }
}

/** A tool call with no result after it. */
export interface UnansweredToolCall {
  readonly messageId: MessageId
  readonly toolCallId: string
}
/** A tool result with no call before it. */
export interface OrphanToolResult {
  readonly messageId: MessageId
  readonly toolCallId: string
}
/** Several results for one call id. */
export interface DuplicateToolResults {
  readonly toolCallId: string
  readonly messageIds: readonly MessageId[]
}

/** Tool-call pairing state of a message list. Providers reject a request where any list is non-empty. */
export interface ToolPairing {
  readonly ok: boolean
  readonly unanswered: readonly UnansweredToolCall[]
  readonly orphans: readonly OrphanToolResult[]
  readonly duplicates: readonly DuplicateToolResults[]
}

/** The ids of an assistant message's tool calls (`id`, or `call_id` where a provider uses it). */
export function toolCallIds(payload: ChatMessage): string[] {
  checkPayload(payload, 'toolCallIds')
  return guardInput('toolCallIds', () => callIds(payload))
}

function callIds(payload: ChatMessage): string[] {
  if (payload.role !== 'assistant' || !Array.isArray(payload.tool_calls)) return []
  const ids: string[] = []
  for (const call of payload.tool_calls) {
    if (typeof call !== 'object' || call === null) continue
    const id = call.id ?? call.call_id
    if (typeof id === 'string') ids.push(id)
  }
  return ids
}

/** The call id a tool result answers (`tool_call_id`, or `call_id`), or undefined. */
export function toolResultId(payload: ChatMessage): string | undefined {
  checkPayload(payload, 'toolResultId')
  return guardInput('toolResultId', () => resultId(payload))
}

function resultId(payload: ChatMessage): string | undefined {
  if (payload.role !== 'tool') return undefined
  const id = payload.tool_call_id ?? payload.call_id
  return typeof id === 'string' ? id : undefined
}

/**
 * The list without later identical copies of a message (same id, same content hash): copies are one
 * message (docs/guarantees.md). Copies with other content under the same id are kept (a conflict the
 * store refuses). Returns `list` itself when it has no copies.
 */
export function withoutIdenticalCopies<M extends { readonly id: string; readonly payload: ChatMessage }>(list: readonly M[]): readonly M[] {
  const seen = new Map<string, M[]>()
  let copies = false
  const out: M[] = []
  for (const m of list) {
    const same = seen.get(m.id)
    if (same === undefined) {
      seen.set(m.id, [m])
      out.push(m)
    } else if (same.some((s) => s === m || contentHash(s.payload) === contentHash(m.payload))) {
      copies = true
    } else {
      same.push(m)
      out.push(m)
    }
  }
  return copies ? out : list
}

/**
 * Checks tool-call pairing over a list in order: every call needs exactly one result after it; a
 * result before (or without) its call is an orphan. Identical copies of a message count once.
 */
export function toolPairing(messages: readonly { readonly id: MessageId; readonly payload: ChatMessage }[]): ToolPairing {
  if (!guardInput('messages', () => Array.isArray(messages))) throw new TurnlogError('INVALID_INPUT', 'toolPairing needs an array of messages', { details: { field: 'messages' } })
  return guardInput('toolPairing', () => pairing(messages))
}

function pairing(list: readonly { readonly id: MessageId; readonly payload: ChatMessage }[]): ToolPairing {
  for (const m of list) {
    if (typeof m !== 'object' || m === null || typeof m.payload !== 'object' || m.payload === null) {
      throw new TurnlogError('INVALID_INPUT', 'toolPairing needs messages with a payload object', { details: { field: 'messages' } })
    }
  }
  // identical copies of one message (a redelivery pushed twice) are that one message, not a second result
  const messages = withoutIdenticalCopies(list)
  const calls = new Map<string, MessageId>()
  const results = new Map<string, MessageId[]>()
  const orphans: OrphanToolResult[] = []
  for (const m of messages) {
    for (const id of callIds(m.payload)) if (!calls.has(id)) calls.set(id, m.id)
    const answered = resultId(m.payload)
    if (answered !== undefined) {
      if (!calls.has(answered)) {
        orphans.push({ messageId: m.id, toolCallId: answered })
        continue
      }
      const list = results.get(answered)
      if (list) list.push(m.id)
      else results.set(answered, [m.id])
    }
  }
  const unanswered: UnansweredToolCall[] = []
  for (const [toolCallId, messageId] of calls) if (!results.has(toolCallId)) unanswered.push({ messageId, toolCallId })
  const duplicates: DuplicateToolResults[] = []
  for (const [toolCallId, messageIds] of results) if (messageIds.length > 1) duplicates.push({ toolCallId, messageIds })
  return {
    ok: unanswered.length === 0 && orphans.length === 0 && duplicates.length === 0,
    unanswered,
    orphans,
    duplicates,
  }
}
