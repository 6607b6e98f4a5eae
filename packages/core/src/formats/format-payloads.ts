import type { ChatMessage } from '../chat-message.js'
import type { AiSdkModelMessage } from './ai-sdk-model-format.js'
import type { AiSdkUiMessage } from './ai-sdk-ui-format.js'
import type { AnthropicMessageParam } from './anthropic-format.js'
import type { OpenAIAgentsItem } from './openai-agents-format.js'
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
