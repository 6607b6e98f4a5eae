/**
 * The demo script's message constructors (chat format).
 * @packageDocumentation
 */
import { createMessage, type ChatMessage, type Message } from '@turnlog/core'

/** A user message; an `externalId` (a platform's own id) derives the message id. */
export function user(content: string, options: { externalId?: string } = {}): Message {
  // the demo's platform ids already name their chat (slack:<team>:<channel>:<ts>): globally unique
  return createMessage({ role: 'user', content }, options.externalId === undefined ? options : { ...options, scope: null })
}

/** An assistant message. */
export function assistant(
  payload: Omit<ChatMessage, 'role'>,
  options: { status?: 'partial'; id?: string; createdAt?: string } = {},
): Message {
  return createMessage({ role: 'assistant', ...payload }, options)
}

/** A tool result answering the call `callId`, its content JSON text. */
export function toolResult(callId: string, content: unknown): Message {
  return createMessage({ role: 'tool', tool_call_id: callId, content: JSON.stringify(content) })
}

/** One entry of an assistant's `tool_calls`. */
export function call(id: string, name: string, args: unknown): NonNullable<ChatMessage['tool_calls']>[number] {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } }
}
