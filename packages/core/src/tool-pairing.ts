import type { ChatMessage } from './chat-message.js'
import type { MessageId } from './ids.js'

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
  if (payload.role !== 'assistant' || !Array.isArray(payload.tool_calls)) return []
  const ids: string[] = []
  for (const call of payload.tool_calls) {
    const id = call.id ?? call.call_id
    if (typeof id === 'string') ids.push(id)
  }
  return ids
}

/** The call id a tool result answers (`tool_call_id`, or `call_id`), or undefined. */
export function toolResultId(payload: ChatMessage): string | undefined {
  if (payload.role !== 'tool') return undefined
  return payload.tool_call_id ?? payload.call_id
}

/**
 * Checks tool-call pairing over a list in order: every call needs exactly one result after it; a
 * result before (or without) its call is an orphan.
 */
export function toolPairing(messages: readonly { readonly id: MessageId; readonly payload: ChatMessage }[]): ToolPairing {
  const calls = new Map<string, MessageId>()
  const results = new Map<string, MessageId[]>()
  const orphans: OrphanToolResult[] = []
  for (const m of messages) {
    for (const id of toolCallIds(m.payload)) if (!calls.has(id)) calls.set(id, m.id)
    const answered = toolResultId(m.payload)
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
