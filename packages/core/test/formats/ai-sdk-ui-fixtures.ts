/**
 * `ai-sdk-ui` fixtures typed against the `ai` SDK's own `UIMessage` (v6): a shape drift in the SDK
 * fails `pnpm typecheck`. Every part kind, static and dynamic tool parts in every state, approvals,
 * provider-executed tools, data parts, and (cast) a part kind a later SDK may add.
 */
import type { DynamicToolUIPart, ToolUIPart, UIMessage } from 'ai'

/** A user message: text and a file. */
export const userText = {
  id: 'msg-user-1',
  role: 'user',
  metadata: { createdAt: 1764615600000 },
  parts: [
    { type: 'text', text: 'What is the weather in Paris? Also see the attached chart.' },
    { type: 'file', mediaType: 'image/png', filename: 'chart.png', url: 'data:image/png;base64,iVBORw0KGgo=' },
  ],
} as const satisfies UIMessage

/** A system message (text only). */
export const system = {
  id: 'msg-system-1',
  role: 'system',
  parts: [{ type: 'text', text: 'You are a helpful assistant.' }],
} as const satisfies UIMessage

/** An assistant message with reasoning, a step boundary, sources, a data part and a finished static tool call. */
export const assistantAnswered = {
  id: 'msg-assistant-1',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    {
      type: 'reasoning',
      text: 'The user wants the weather; call the tool.',
      state: 'done',
      providerMetadata: { anthropic: { signature: 'sig-1' } },
    },
    {
      type: 'tool-getWeather',
      toolCallId: 'call-weather-1',
      state: 'output-available',
      input: { city: 'Paris' },
      output: { tempC: 18, sky: 'clear' },
    },
    { type: 'step-start' },
    { type: 'source-url', sourceId: 'src-1', url: 'https://example.com/paris', title: 'Paris weather' },
    { type: 'source-document', sourceId: 'src-2', mediaType: 'application/pdf', title: 'Climate report', filename: 'report.pdf' },
    { type: 'data-weather', id: 'weather-1', data: { city: 'Paris', status: 'done' } },
    { type: 'text', text: 'It is 18 °C and clear in Paris.', state: 'done' },
  ],
} as const satisfies UIMessage

/** An assistant message whose tool call has no result yet (`input-available`): an unanswered call. */
export const assistantUnanswered = {
  id: 'msg-assistant-2',
  role: 'assistant',
  parts: [
    { type: 'step-start' },
    { type: 'tool-getWeather', toolCallId: 'call-weather-2', state: 'input-available', input: { city: 'Lyon' } },
  ],
} as const satisfies UIMessage

/** Tool parts in every other state: streaming input, approvals (requested, responded, denied), an error, a dynamic tool, a provider-executed tool. */
export const assistantStates = {
  id: 'msg-assistant-3',
  role: 'assistant',
  parts: [
    {
      type: 'tool-search',
      toolCallId: 'call-s-1',
      state: 'input-streaming',
      input: { query: 'par' },
      rawInput: '{"query":"par',
      inputEncoding: 'json',
    },
    { type: 'tool-deleteFile', toolCallId: 'call-d-1', state: 'approval-requested', input: { path: '/tmp/a' }, approval: { id: 'appr-1' } },
    {
      type: 'tool-deleteFile',
      toolCallId: 'call-d-2',
      state: 'approval-responded',
      input: { path: '/tmp/b' },
      approval: { id: 'appr-2', approved: true, reason: 'ok' },
    },
    {
      type: 'tool-deleteFile',
      toolCallId: 'call-d-3',
      state: 'output-denied',
      input: { path: '/etc' },
      approval: { id: 'appr-3', approved: false, reason: 'no' },
    },
    { type: 'tool-getWeather', toolCallId: 'call-weather-3', state: 'output-error', input: { city: '' }, errorText: 'city is required' },
    {
      type: 'dynamic-tool',
      toolName: 'mcp_lookup',
      toolCallId: 'call-dyn-1',
      state: 'output-available',
      input: { id: 7 },
      output: 'found',
    },
    {
      type: 'tool-web_search',
      toolCallId: 'srvtoolu_01',
      state: 'output-available',
      providerExecuted: true,
      input: { query: 'paris' },
      output: [{ url: 'https://example.com' }],
    },
  ],
} as const satisfies UIMessage

/** A static tool part in `output-available` with its granted approval, typed as the SDK's `ToolUIPart`. */
export const approvedToolPart = {
  type: 'tool-deleteFile',
  toolCallId: 'call-d-4',
  state: 'output-available',
  input: { path: '/tmp/c' },
  output: { deleted: true },
  approval: { id: 'appr-4', approved: true },
} as const satisfies ToolUIPart

/** A dynamic tool part still waiting for its result. */
export const dynamicPending = {
  type: 'dynamic-tool',
  toolName: 'mcp_fetch',
  toolCallId: 'call-dyn-2',
  state: 'input-available',
  input: { url: 'https://example.com' },
} as const satisfies DynamicToolUIPart

/** An assistant message with a pending dynamic tool call and text. */
export const assistantDynamicPending = {
  id: 'msg-assistant-4',
  role: 'assistant',
  parts: [{ type: 'text', text: 'Fetching…' }, dynamicPending],
} as const satisfies UIMessage

/** A part kind a later SDK may add (not in `UIMessagePart`: cast), kept verbatim; and an unknown field on a known part. */
export const futureKinds = {
  id: 'msg-assistant-5',
  role: 'assistant',
  parts: [
    { type: 'citation-card', cardId: 'c-1', body: { x: 1 } } as unknown as UIMessage['parts'][number],
    { type: 'text', text: 'hello', futureField: 42 } as UIMessage['parts'][number],
  ],
} satisfies UIMessage

/** Every valid fixture that the SDK's own `validateUIMessages` accepts (no unknown part kinds). */
export const SDK_VALID: readonly UIMessage[] = [
  userText,
  system,
  assistantAnswered,
  assistantUnanswered,
  assistantStates,
  assistantDynamicPending,
  { id: 'msg-assistant-6', role: 'assistant', parts: [approvedToolPart] },
]

/** Every valid fixture. */
export const ALL_VALID: readonly UIMessage[] = [...SDK_VALID, futureKinds]
