/**
 * Compile-time contract with the real SDK types of every built-in format (checked by `pnpm typecheck`;
 * issue 15): a value typed as the SDK's own message type goes into `createMessage` without a type
 * argument and without a cast, in its format, and comes back as `Message<FormatPayloads[format]>`:
 * `openai` `ChatCompletionMessageParam` (openai-chat) and `ResponseInputItem` (openai-responses),
 * Anthropic `MessageParam` (anthropic), AI SDK `UIMessage` (ai-sdk-ui) and `ModelMessage`
 * (ai-sdk-model), Agents SDK `AgentInputItem` (openai-agents). A wrong shape for a built-in format
 * does not compile (it does not fall through to the overload for formats registered at run time).
 * The deprecated `function` role of `ChatCompletionMessageParam` is the one exception: turnlog refuses
 * it at run time, so it does not compile either.
 * The runtime test below runs the same values.
 */
import { describe, expect, it } from '@jest/globals'
import type Anthropic from '@anthropic-ai/sdk'
import type { AgentInputItem } from '@openai/agents-core'
import type { ModelMessage, UIMessage } from 'ai'
import type OpenAI from 'openai'
import {
  createMessage,
  toWire,
  type AiSdkModelMessage,
  type AiSdkUiMessage,
  type AnthropicMessageParam,
  type ChatMessage,
  type Message,
  type OpenAIAgentsItem,
  type OpenAIResponsesItem,
} from '@turnlog/core'
import { assertType, type Equal } from '../support/type-equality.js'

/** Every request message of the openai SDK but the deprecated `function` role, which turnlog refuses (docs/formats.md). */
type ChatParam = Exclude<OpenAI.Chat.Completions.ChatCompletionMessageParam, OpenAI.Chat.Completions.ChatCompletionFunctionMessageParam>

const chatParam: ChatParam = { role: 'user', content: 'weather in Paris?' }
const functionParam: OpenAI.Chat.Completions.ChatCompletionMessageParam = { role: 'function', name: 'weather', content: '18 degrees' }
const responsesItem: OpenAI.Responses.ResponseInputItem = { type: 'function_call_output', call_id: 'call_1', output: '18 degrees' }
const anthropicParam: Anthropic.MessageParam = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }],
}
const uiMessage: UIMessage = { id: 'ui-1', role: 'user', parts: [{ type: 'text', text: 'weather in Paris?' }] }
const modelMessage: ModelMessage = {
  role: 'tool',
  content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'weather', output: { type: 'text', value: '18 degrees' } }],
}
const agentItem: AgentInputItem = { type: 'function_call', callId: 'call_1', name: 'weather', arguments: '{"city":"Paris"}' }

function sdkTypesGoIn(): void {
  const chat = createMessage(chatParam)
  const chatNamed = createMessage(chatParam, { format: 'openai-chat' })
  const responses = createMessage(responsesItem, { format: 'openai-responses' })
  const anthropic = createMessage(anthropicParam, { format: 'anthropic' })
  const ui = createMessage(uiMessage, { format: 'ai-sdk-ui' })
  const model = createMessage(modelMessage, { format: 'ai-sdk-model' })
  const agents = createMessage(agentItem, { format: 'openai-agents' })
  assertType<Equal<typeof chat, Message<ChatMessage>>>()
  assertType<Equal<typeof chatNamed, Message<ChatMessage>>>()
  assertType<Equal<typeof responses, Message<OpenAIResponsesItem>>>()
  assertType<Equal<typeof anthropic, Message<AnthropicMessageParam>>>()
  assertType<Equal<typeof ui, Message<AiSdkUiMessage>>>()
  assertType<Equal<typeof model, Message<AiSdkModelMessage>>>()
  assertType<Equal<typeof agents, Message<OpenAIAgentsItem>>>()
  // lists of them too (a loop over the SDK's own arrays)
  const uiList: Message<AiSdkUiMessage>[] = [uiMessage].map((m) => createMessage(m, { format: 'ai-sdk-ui' }))
  const modelList: Message<AiSdkModelMessage>[] = [modelMessage].map((m) => createMessage(m, { format: 'ai-sdk-model' }))
  const agentList: Message<OpenAIAgentsItem>[] = [agentItem].map((m) => createMessage(m, { format: 'openai-agents' }))

  // @ts-expect-error the deprecated function role is refused (at run time too)
  createMessage(functionParam)
  // @ts-expect-error an anthropic message has no tool role
  createMessage({ role: 'tool', content: 'x' }, { format: 'anthropic' })
  // @ts-expect-error a UIMessage needs its parts
  createMessage({ id: 'ui-2', role: 'user', content: 'hi' }, { format: 'ai-sdk-ui' })
  // @ts-expect-error a ModelMessage of role tool carries tool results, not a number
  createMessage({ role: 'tool', content: 42 }, { format: 'ai-sdk-model' })
  // @ts-expect-error an agents function call names its call by callId (a string)
  createMessage({ type: 'function_call', callId: 1, name: 'weather', arguments: '{}' }, { format: 'openai-agents' })
  // @ts-expect-error a Responses function call output names its call by call_id (a string)
  createMessage({ type: 'function_call_output', call_id: 42, output: 'x' }, { format: 'openai-responses' })
  // @ts-expect-error an SDK message of one format is not a payload of another
  createMessage(uiMessage, { format: 'anthropic' })
  // @ts-expect-error a payload typed loosely needs the type argument with a built-in format (createMessage<object>)
  createMessage(anthropicParam as object, { format: 'anthropic' })
  void [chat, chatNamed, responses, anthropic, ui, model, agents, uiList, modelList, agentList]
}

describe('the SDK types of every built-in format (compile time; this is the runtime half)', () => {
  it('each SDK value is stored in its format as given, and its wire copy equals it', () => {
    // given
    const messages = [
      createMessage(chatParam),
      createMessage(responsesItem, { format: 'openai-responses' }),
      createMessage(anthropicParam, { format: 'anthropic' }),
      createMessage(uiMessage, { format: 'ai-sdk-ui' }),
      createMessage(modelMessage, { format: 'ai-sdk-model' }),
      createMessage(agentItem, { format: 'openai-agents' }),
    ]

    // when
    const wire = messages.map((m) => toWire([m as Message<unknown>])[0])

    // then
    expect(messages.map((m) => m.format)).toEqual([
      'openai-chat',
      'openai-responses',
      'anthropic',
      'ai-sdk-ui',
      'ai-sdk-model',
      'openai-agents',
    ])
    expect(wire).toEqual([chatParam, responsesItem, anthropicParam, uiMessage, modelMessage, agentItem])
    expect(typeof sdkTypesGoIn).toBe('function')
  })
})
