/**
 * `ai-sdk-model` fixtures typed against the `ai` SDK's own `ModelMessage` types (v6): a shape drift in
 * the SDK fails `pnpm typecheck`. Every role and part kind, tool calls and results (every output
 * type), approvals, reasoning, a provider-executed tool, and (cast) a part kind a later SDK may add.
 */
import type { AssistantModelMessage, ModelMessage, SystemModelMessage, ToolModelMessage, ToolResultPart, UserModelMessage } from 'ai'

/** A system message. */
export const system = { role: 'system', content: 'You are a helpful assistant.' } as const satisfies SystemModelMessage

/** A user message as a plain string. */
export const userString = { role: 'user', content: 'What is the weather in Paris?' } as const satisfies UserModelMessage

/** A user message with text, an image and a file (binary data as base64 / URL strings). */
export const userParts = {
  role: 'user',
  content: [
    { type: 'text', text: 'Look at these.' },
    { type: 'image', image: 'https://example.com/cat.png', mediaType: 'image/png' },
    { type: 'file', data: 'JVBERi0xLjQK', mediaType: 'application/pdf', filename: 'doc.pdf' },
  ],
  providerOptions: { openai: { user: 'u-1' } },
} as const satisfies UserModelMessage

/** An assistant message with reasoning, text and two tool calls. */
export const assistantCalls = {
  role: 'assistant',
  content: [
    { type: 'reasoning', text: 'Two cities: two calls.', providerOptions: { anthropic: { signature: 'sig' } } },
    { type: 'text', text: 'Checking both.' },
    { type: 'tool-call', toolCallId: 'call_1', toolName: 'getWeather', input: { city: 'Paris' } },
    { type: 'tool-call', toolCallId: 'call_2', toolName: 'getWeather', input: { city: 'Lyon' } },
  ],
} as const satisfies AssistantModelMessage

/** The tool message answering both calls (text and json outputs). */
export const toolResults = {
  role: 'tool',
  content: [
    { type: 'tool-result', toolCallId: 'call_1', toolName: 'getWeather', output: { type: 'json', value: { tempC: 18 } } },
    { type: 'tool-result', toolCallId: 'call_2', toolName: 'getWeather', output: { type: 'text', value: '15 °C' } },
  ],
} as const satisfies ToolModelMessage

/** A `content` tool output: text, an image by URL and a file's data. */
const contentOutput = {
  type: 'content',
  value: [
    { type: 'text', text: 'see image' },
    { type: 'image-url', url: 'https://example.com/a.png' },
    { type: 'file-data', data: 'AAAA', mediaType: 'application/pdf' },
  ],
} as const satisfies ToolResultPart['output']

/** A tool result with every other output type. */
export const toolOutputs = [
  { type: 'tool-result', toolCallId: 'call_3', toolName: 't', output: { type: 'error-text', value: 'boom' } },
  { type: 'tool-result', toolCallId: 'call_4', toolName: 't', output: { type: 'error-json', value: { code: 1 } } },
  { type: 'tool-result', toolCallId: 'call_5', toolName: 't', output: { type: 'execution-denied', reason: 'not allowed' } },
  { type: 'tool-result', toolCallId: 'call_6', toolName: 't', output: contentOutput },
] as const satisfies readonly ToolResultPart[]

/** An assistant message opening the calls `toolOutputs` answers, and asking approval for one. */
export const assistantMoreCalls = {
  role: 'assistant',
  content: [
    ...['call_3', 'call_4', 'call_5', 'call_6'].map((toolCallId) => ({ type: 'tool-call' as const, toolCallId, toolName: 't', input: {} })),
    { type: 'tool-approval-request', approvalId: 'appr_1', toolCallId: 'call_5' },
  ],
} as const satisfies AssistantModelMessage

/** The tool message with the approval response and the results. */
export const toolMore = {
  role: 'tool',
  content: [{ type: 'tool-approval-response', approvalId: 'appr_1', approved: false, reason: 'not allowed' }, ...toolOutputs],
} as const satisfies ToolModelMessage

/** A provider-executed tool: call and result in the assistant message itself. */
export const assistantProviderExecuted = {
  role: 'assistant',
  content: [
    { type: 'tool-call', toolCallId: 'srvtoolu_1', toolName: 'web_search', input: { query: 'paris' }, providerExecuted: true },
    {
      type: 'tool-result',
      toolCallId: 'srvtoolu_1',
      toolName: 'web_search',
      output: { type: 'json', value: [{ url: 'https://example.com' }] },
    },
    { type: 'text', text: 'Found it.' },
  ],
} as const satisfies AssistantModelMessage

/** An assistant message whose call is never answered. */
export const assistantUnanswered = {
  role: 'assistant',
  content: [{ type: 'tool-call', toolCallId: 'call_9', toolName: 'getWeather', input: { city: 'Nice' } }],
} as const satisfies AssistantModelMessage

/** An assistant message as a plain string. */
export const assistantString = { role: 'assistant', content: 'Done.' } as const satisfies AssistantModelMessage

/** A part kind a later SDK may add (cast), and an unknown field on a known part, kept verbatim. */
export const futureKinds = {
  role: 'assistant',
  content: [
    { type: 'citation', ref: 'c1' } as unknown as AssistantModelMessage['content'][number] & object,
    { type: 'text', text: 'x', future: true } as { type: 'text'; text: string },
  ],
} satisfies AssistantModelMessage

/** Every valid fixture, in a paired order (the unanswered call last). */
export const ALL_VALID: readonly ModelMessage[] = [
  system,
  userString,
  userParts,
  assistantCalls,
  toolResults,
  assistantMoreCalls,
  toolMore,
  assistantProviderExecuted,
  assistantString,
  futureKinds,
  assistantUnanswered,
]
