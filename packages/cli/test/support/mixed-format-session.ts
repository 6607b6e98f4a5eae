/**
 * A session holding messages of every built-in format (docs/formats.md), with tool calls and their
 * results, reasoning items and one unanswered call (an `openai-agents` function call), for the CLI's
 * per-format tests (`replay --view wire`, `replay --view live`, `inspect --html`).
 */
import { createMessage, type Message } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'

/** One message of the mixed-format session: its name in the tests, format, payload and a text its preview shows. */
export interface MixedFormatMessage {
  readonly name: string
  readonly format: string
  readonly payload: Record<string, unknown>
  /** A piece of text each view of the message must show. */
  readonly shows: string
}

/** The session's messages, in order. */
export const MIXED_FORMAT_MESSAGES: readonly MixedFormatMessage[] = [
  {
    name: 'chat-user',
    format: 'openai-chat',
    payload: { role: 'user', content: 'Weather in Paris and Lyon?' },
    shows: 'Weather in Paris and Lyon?',
  },
  {
    name: 'chat-call',
    format: 'openai-chat',
    payload: {
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_chat_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
    },
    shows: 'get_weather',
  },
  {
    name: 'chat-result',
    format: 'openai-chat',
    payload: { role: 'tool', tool_call_id: 'call_chat_1', content: '18 C, clear' },
    shows: '18 C, clear',
  },
  { name: 'json-note', format: 'json', payload: { kind: 'note', text: 'routing: weather agent' }, shows: 'routing: weather agent' },
  {
    name: 'responses-reasoning',
    format: 'openai-responses',
    payload: {
      type: 'reasoning',
      id: 'rs_1',
      summary: [{ type: 'summary_text', text: 'Looked up the weather.' }],
      content: [{ type: 'reasoning_text', text: 'The user wants Lyon too.' }],
    },
    shows: 'Looked up the weather.',
  },
  {
    name: 'responses-call',
    format: 'openai-responses',
    payload: {
      type: 'function_call',
      id: 'fc_1',
      call_id: 'call_resp_1',
      name: 'get_forecast',
      arguments: '{"city":"Lyon"}',
      status: 'completed',
    },
    shows: 'get_forecast',
  },
  {
    name: 'responses-output',
    format: 'openai-responses',
    payload: { type: 'function_call_output', call_id: 'call_resp_1', output: '{"tempC":15}' },
    shows: 'tempC',
  },
  {
    name: 'anthropic-call',
    format: 'anthropic',
    payload: {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Need the time too.', signature: 'EqQBCgIYAhIM' },
        { type: 'text', text: 'Checking the clock.' },
        { type: 'tool_use', id: 'toolu_01', name: 'get_time', input: { tz: 'Europe/Paris' } },
      ],
    },
    shows: 'Checking the clock.',
  },
  {
    name: 'anthropic-result',
    format: 'anthropic',
    payload: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '14:05' }] },
    shows: '14:05',
  },
  {
    name: 'ui-answered',
    format: 'ai-sdk-ui',
    payload: {
      id: 'msg-ui-1',
      role: 'assistant',
      parts: [
        { type: 'step-start' },
        { type: 'reasoning', text: 'Call the tool for Nice.', state: 'done' },
        { type: 'tool-getWeather', toolCallId: 'call-ui-1', state: 'output-available', input: { city: 'Nice' }, output: { tempC: 21 } },
        { type: 'text', text: 'It is 21 C in Nice.', state: 'done' },
      ],
    },
    shows: 'Call the tool for Nice.',
  },
  {
    name: 'model-call',
    format: 'ai-sdk-model',
    payload: {
      role: 'assistant',
      content: [
        { type: 'reasoning', text: 'One more city.' },
        { type: 'text', text: 'Checking Brest.' },
        { type: 'tool-call', toolCallId: 'call_model_1', toolName: 'getWeather', input: { city: 'Brest' } },
      ],
    },
    shows: 'Checking Brest.',
  },
  {
    name: 'model-result',
    format: 'ai-sdk-model',
    payload: {
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_model_1', toolName: 'getWeather', output: { type: 'text', value: '11 C, rain' } }],
    },
    shows: '11 C, rain',
  },
  {
    name: 'agents-unanswered',
    format: 'openai-agents',
    payload: { type: 'function_call', callId: 'call_agents_1', name: 'book_train', arguments: '{"to":"Brest"}', status: 'completed' },
    shows: 'book_train',
  },
]

/** Creates the session in the database; returns its id and each message's id by name. */
export async function createMixedFormatSession(connectionString: string): Promise<{ sessionId: string; ids: Record<string, string> }> {
  const store = await openStore({ connectionString })
  try {
    const sessionId = await store.createSession({ metadata: { title: 'every format' } })
    const ids: Record<string, string> = {}
    const messages: Message[] = MIXED_FORMAT_MESSAGES.map((m) => {
      const message = createMessage(m.payload, { format: m.format }) as Message
      ids[m.name] = message.id
      return message
    })
    await store.append(sessionId, messages)
    return { sessionId, ids }
  } finally {
    await store.close()
  }
}
