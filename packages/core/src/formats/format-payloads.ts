import type { ChatMessage } from '../chat-message.js'
import type { AiSdkModelMessage } from './ai-sdk-model-format.js'
import type { AiSdkUiMessage } from './ai-sdk-ui-format.js'
import type { AnthropicMessageParam } from './anthropic-format.js'
import type { OpenAIAgentsItem } from './openai-agents-format.js'
import type { OpenAIChatInput } from './openai-chat-format.js'
import type { OpenAIResponsesItem } from './openai-responses-format.js'

/**
 * The payload type of each built-in format, by name: `createMessage(payload, { format: 'anthropic' })`
 * checks `payload` against `AnthropicMessageParam` and returns a `Message<AnthropicMessageParam>`.
 * Not listed, so the payload type is the caller's own (inferred, or `createMessage<P>`'s type argument):
 * `json` (any JSON object) and formats registered at run time.
 */
export interface FormatPayloads {
  readonly 'openai-chat': ChatMessage
  readonly 'openai-responses': OpenAIResponsesItem
  readonly 'openai-agents': OpenAIAgentsItem
  readonly anthropic: AnthropicMessageParam
  readonly 'ai-sdk-ui': AiSdkUiMessage
  readonly 'ai-sdk-model': AiSdkModelMessage
}

/** The name of a built-in format (a key of {@link FormatPayloads}). */
export type BuiltInFormatName = keyof FormatPayloads

/** A content part, block or item as an SDK declares it: an object with a `type` (the rest is checked at run time). */
interface TypedPart {
  readonly type: string
}

/**
 * What `createMessage(payload, { format })` accepts at compile time for each built-in format, besides
 * {@link FormatPayloads}' own type: the format's shape without an index signature, so the SDKs'
 * declared interfaces go in as they are, without a type argument or a cast: the `openai` SDK's
 * `ChatCompletionMessage` and `ChatCompletionMessageParam` (but the deprecated `function` role, which
 * turnlog refuses) and `ResponseInputItem`, Anthropic's `MessageParam`, the AI SDK's `UIMessage` and
 * `ModelMessage`, the Agents SDK's `AgentInputItem`. It checks what tells a format's messages apart (a
 * role, `parts`, a content kind, the call-id fields); the payload is validated completely at run time
 * either way, and the message is typed with {@link FormatPayloads}.
 */
export interface FormatInputs {
  readonly 'openai-chat': OpenAIChatInput
  readonly 'openai-responses': {
    readonly type?: string | null | undefined
    readonly id?: string | null | undefined
    readonly role?: string | undefined
    readonly call_id?: string | null | undefined
  }
  readonly 'openai-agents': {
    readonly type?: string | undefined
    readonly id?: string | undefined
    readonly role?: string | undefined
    readonly callId?: string | null | undefined
    readonly providerData?: { readonly [key: string]: unknown } | undefined
  }
  readonly anthropic: { readonly role: 'user' | 'assistant' | 'system'; readonly content: string | readonly TypedPart[] }
  readonly 'ai-sdk-ui': {
    readonly id: string
    readonly role: 'system' | 'user' | 'assistant'
    readonly metadata?: unknown
    readonly parts: readonly TypedPart[]
  }
  readonly 'ai-sdk-model':
    | { readonly role: 'system'; readonly content: string }
    | { readonly role: 'user' | 'assistant'; readonly content: string | readonly TypedPart[] }
    | { readonly role: 'tool'; readonly content: readonly TypedPart[] }
}
