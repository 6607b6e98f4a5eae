import type { UIMessage } from 'ai'
import { sameJson as same } from './same-json.js'

/** A tool part's place in its lifecycle: a later state only ever follows an earlier one. */
const TOOL_STATE_RANK: Readonly<Record<string, number>> = {
  'input-streaming': 0,
  'input-available': 1,
  'approval-requested': 2,
  'approval-responded': 3,
  'output-available': 4,
  'output-error': 4,
  'output-denied': 4,
}

/** A tool part (`tool-<name>` or `dynamic-tool`) as far as this check reads it. */
interface ToolPartView {
  readonly type: string
  readonly toolCallId?: unknown
  readonly state?: unknown
  readonly input?: unknown
  readonly approval?: { readonly approved?: unknown } | undefined
}

/**
 * True when `posted` is an earlier state of the stored assistant reply `stored`: what a client that
 * lost the response to its request holds, not an edit. Every posted part is the stored part at its
 * place, or the same tool call (type, `toolCallId`, input) in an earlier state of its lifecycle
 * (`approval-responded` before `output-available`, …) carrying the same approval decision; the stored
 * reply may have more parts after them (the continuation the server streamed). Metadata is not
 * compared (the stream sets it). An assistant message only: a user message whose parts shrank was
 * edited.
 *
 * Such a re-post is a retry, so the chat keeps the stored reply: recording the earlier state as a
 * revision would roll the reply back and make the route run the model (and the approved tool) again.
 */
export function isEarlierReplyState(posted: UIMessage, stored: UIMessage): boolean {
  if (posted.role !== 'assistant' || stored.role !== 'assistant' || posted.id !== stored.id) return false
  if (!Array.isArray(posted.parts) || !Array.isArray(stored.parts) || posted.parts.length > stored.parts.length) return false
  let earlier = posted.parts.length < stored.parts.length
  for (let i = 0; i < posted.parts.length; i++) {
    const p = posted.parts[i]
    const s = stored.parts[i]
    if (same(p, s)) continue
    if (!isEarlierToolState(p as ToolPartView, s as ToolPartView)) return false
    earlier = true
  }
  return earlier
}

/** `p` is the tool call of `s` in an earlier state, with the same input and the same approval decision. */
function isEarlierToolState(p: ToolPartView, s: ToolPartView): boolean {
  if (typeof p !== 'object' || p === null || typeof s !== 'object' || s === null) return false
  const isTool = typeof p.type === 'string' && (p.type.startsWith('tool-') || p.type === 'dynamic-tool')
  if (!isTool || p.type !== s.type || typeof p.toolCallId !== 'string' || p.toolCallId !== s.toolCallId) return false
  const from = TOOL_STATE_RANK[String(p.state)]
  const to = TOOL_STATE_RANK[String(s.state)]
  if (from === undefined || to === undefined || from >= to) return false
  // a streamed input is partial until input-available: only a complete one must match
  if (from >= 1 && !same(p.input, s.input)) return false
  const decided = p.approval?.approved
  return decided === undefined || s.approval?.approved === decided
}
