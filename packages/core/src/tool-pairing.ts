import type { ChatMessage } from './chat-message.js'
import type { MessageId } from './ids.js'
import { canonicalJson, contentHash } from './content-hash.js'
import { openAIChatFormat } from './formats/openai-chat-format.js'
import { readingFormat } from './formats/format-registry.js'
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

/**
 * One tool-call id opened more than once: two calls with one id in one message, a later message that
 * calls it again, or (`ai-sdk-ui`) a tool part still open beside an answered part of the same call.
 * `messageIds` lists every message that opens it, in order, a message once per opening.
 */
export interface DuplicateToolCalls {
  readonly toolCallId: string
  readonly messageIds: readonly MessageId[]
}

/** Tool-call pairing state of a message list. Providers reject a request where any list is non-empty. */
export interface ToolPairing {
  readonly ok: boolean
  readonly unanswered: readonly UnansweredToolCall[]
  readonly orphans: readonly OrphanToolResult[]
  /** Several results for one call id. */
  readonly duplicates: readonly DuplicateToolResults[]
  /** A call id opened more than once (the first opening is the one `unanswered` and results pair with). */
  readonly duplicateCalls: readonly DuplicateToolCalls[]
}

/** The ids of an assistant message's tool calls (`id`, or `call_id` where a provider uses it). */
export function toolCallIds(payload: ChatMessage): string[] {
  checkPayload(payload, 'toolCallIds')
  return guardInput('toolCallIds', () => callIds(payload))
}

function callIds(payload: ChatMessage): string[] {
  return [...openAIChatFormat.toolCalls(payload)]
}

/** The call id a tool result answers (`tool_call_id`, or `call_id`), or undefined. */
export function toolResultId(payload: ChatMessage): string | undefined {
  checkPayload(payload, 'toolResultId')
  return guardInput('toolResultId', () => resultId(payload))
}

function resultId(payload: ChatMessage): string | undefined {
  return openAIChatFormat.toolResults(payload)[0]
}

/**
 * The list without later identical copies of a message (same id, same content hash): copies are one
 * message (docs/guarantees.md). Copies with other content under the same id are kept (a conflict the
 * store refuses). Returns `list` itself when it has no copies.
 */
export function withoutIdenticalCopies<M extends { readonly id: string; readonly payload: unknown }>(list: readonly M[]): readonly M[] {
  // the usual list (a load, a prompt) has no id twice: one set of ids says so without an entry per message
  const ids = new Set<string>()
  for (const m of list) ids.add(m.id)
  if (ids.size === list.length) return list
  const seen = new Map<string, M[]>()
  let copies = false
  const out: M[] = []
  for (const m of list) {
    const same = seen.get(m.id)
    if (same === undefined) {
      seen.set(m.id, [m])
      out.push(m)
    } else if (same.some((s) => s === m || sameContent(s.payload, m.payload))) {
      copies = true
    } else {
      same.push(m)
      out.push(m)
    }
  }
  return copies ? out : list
}

/**
 * Same content hash, or (when the hashes differ) the same canonical text: a redacted message as a
 * store loads it carries the original's content hash (primed), a copy of it its placeholder's own.
 */
function sameContent(a: unknown, b: unknown): boolean {
  return contentHash(a as ChatMessage) === contentHash(b as ChatMessage) || canonicalJson(a) === canonicalJson(b)
}

/** What pairing reads of a message: its id, payload and format (absent: `openai-chat`). */
export interface PairingInput {
  readonly id: MessageId
  readonly payload: unknown
  readonly format?: string
}

/**
 * Checks tool-call pairing over a list in order, each message read by its format (which calls it
 * opens, which results it carries): every call id is opened once and needs exactly one result after
 * it; a result before (or without) its call is an orphan; an id opened again (in the same message or
 * a later one) is a duplicate call. Identical copies of a message count once. Calls and results
 * pair by id across formats; a format with no pairing (`json`) opens and answers nothing.
 */
export function toolPairing(messages: readonly PairingInput[]): ToolPairing {
  if (!guardInput('messages', () => Array.isArray(messages)))
    throw new TurnlogError('INVALID_INPUT', 'toolPairing needs an array of messages', { details: { field: 'messages' } })
  return guardInput('toolPairing', () => {
    for (const m of messages) {
      if (typeof m !== 'object' || m === null || typeof m.payload !== 'object' || m.payload === null) {
        throw new TurnlogError('INVALID_INPUT', 'toolPairing needs messages with a payload object', { details: { field: 'messages' } })
      }
    }
    // identical copies of one message (a redelivery pushed twice) are that one message, not a second result
    return pairing(withoutIdenticalCopies(messages))
  })
}

/**
 * {@link toolPairing} of a list a store read, whose ids are distinct (one row per message id: the
 * projection's primary key, or the log of a session of appends only, where an id is appended once):
 * no copies to drop, so the set of ids that looks for them (a hash of every id string) is not built.
 * Internal (`@turnlog/core/internal`): a caller's list goes through {@link toolPairing}.
 */
export function toolPairingOfDistinct(messages: readonly PairingInput[]): ToolPairing {
  return guardInput('toolPairing', () => pairing(messages))
}

function pairing(messages: readonly PairingInput[]): ToolPairing {
  const calls = new Map<string, MessageId>()
  // every opening of a call id, when it is opened more than once (rare: created on the second opening)
  const reopened = new Map<string, MessageId[]>()
  const results = new Map<string, MessageId[]>()
  const orphans: OrphanToolResult[] = []
  for (const m of messages) {
    const format = readingFormat(m.format)
    for (const id of format.toolCalls(m.payload)) {
      const first = calls.get(id)
      if (first === undefined) calls.set(id, m.id)
      else {
        const openings = reopened.get(id)
        if (openings) openings.push(m.id)
        else reopened.set(id, [first, m.id])
      }
    }
    for (const answered of format.toolResults(m.payload)) {
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
  const duplicateCalls: DuplicateToolCalls[] = []
  for (const [toolCallId, messageIds] of reopened) duplicateCalls.push({ toolCallId, messageIds })
  return {
    ok: unanswered.length === 0 && orphans.length === 0 && duplicates.length === 0 && duplicateCalls.length === 0,
    unanswered,
    orphans,
    duplicates,
    duplicateCalls,
  }
}
