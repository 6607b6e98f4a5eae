import { OPENAI_AGENTS_FORMAT, cloneJson, createMessage, type JsonValue, type Message, type OpenAIAgentsItem } from '@turnlog/core'
import type { AgentInputItem } from '@openai/agents-core'

/** A stored Agents SDK item: one turnlog message in the built-in `openai-agents` format. */
export type AgentItemMessage = Message<OpenAIAgentsItem>

/**
 * One Agents SDK item as a turnlog message (`openai-agents` format): validated and copied (a JSON copy,
 * deep-frozen; fields set to `undefined` are dropped, as JSON drops them). With `id`, the message gets
 * that id (a derived id); without, a fresh UUIDv7. Throws `INVALID_MESSAGE` for an item the format
 * refuses, or one that has no JSON form (a `Date`, a `Uint8Array`, a cycle, a bigint).
 */
export function agentItemMessage(item: AgentInputItem | OpenAIAgentsItem, id?: string): AgentItemMessage {
  const options = id === undefined ? { format: OPENAI_AGENTS_FORMAT } : { format: OPENAI_AGENTS_FORMAT, id }
  return createMessage(item as OpenAIAgentsItem, options)
}

/** A fresh, mutable copy of a stored item, as the SDK expects it back (`getItems`, `popItem`). */
export function agentItemOf(message: Message<unknown>): AgentInputItem {
  return cloneJson(message.payload as JsonValue) as unknown as AgentInputItem
}
