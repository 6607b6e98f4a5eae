import {
  OPENAI_AGENTS_FORMAT,
  TurnlogError,
  cloneJson,
  createMessage,
  type JsonValue,
  type Message,
  type OpenAIAgentsItem,
} from '@turnlog/core'
import type { AgentInputItem } from '@openai/agents-core'
import { sameRealmCopy } from './same-realm-copy.js'

/** A stored Agents SDK item: one turnlog message in the built-in `openai-agents` format. */
export type AgentItemMessage = Message<OpenAIAgentsItem>

/**
 * One Agents SDK item as a turnlog message (`openai-agents` format): validated and copied (a JSON copy,
 * deep-frozen; fields set to `undefined` are dropped, as JSON drops them). With `id`, the message gets
 * that id (a derived id); without, a fresh UUIDv7. Throws `INVALID_MESSAGE` for an item the format
 * refuses, or one that has no JSON form (a `Date`, a `Uint8Array`, a cycle, a bigint). Plain objects
 * made in another realm (the SDK's `structuredClone` copies under a test sandbox) are accepted.
 */
export function agentItemMessage(item: AgentInputItem | OpenAIAgentsItem, id?: string): AgentItemMessage {
  const options = id === undefined ? { format: OPENAI_AGENTS_FORMAT } : { format: OPENAI_AGENTS_FORMAT, id }
  let copy: unknown
  try {
    copy = sameRealmCopy(item)
  } catch (error) {
    // a getter that throws: the item cannot be read (its content is not quoted)
    throw new TurnlogError('INVALID_MESSAGE', 'an Agents SDK item could not be read', {
      details: { format: OPENAI_AGENTS_FORMAT },
      cause: error,
    })
  }
  return createMessage(copy as OpenAIAgentsItem, options)
}

/** A fresh, mutable copy of a stored item, as the SDK expects it back (`getItems`, `popItem`). */
export function agentItemOf(message: Message<unknown>): AgentInputItem {
  return cloneJson(message.payload as JsonValue) as unknown as AgentInputItem
}
