/**
 * Payloads of the `anthropic` format, typed against `@anthropic-ai/sdk`'s own `MessageParam` so a
 * shape drift in the SDK fails `pnpm typecheck`. Ids are the API's own (`toolu_…`, `srvtoolu_…`).
 */
import type {
  AssistantMessageParam,
  ContentBlockParam,
  Message as AnthropicResponse,
  MessageParam,
  SystemMessageParam,
  ToolResultBlockParam,
  UserMessageParam,
} from '@anthropic-ai/sdk/resources/messages'

/** A plain user turn with string content. */
export const userText = { role: 'user', content: 'What is the weather in Paris?' } satisfies UserMessageParam

/** A user turn with a text block (cache_control kept verbatim), an image (base64 and url) and documents. */
export const userBlocks = {
  role: 'user',
  content: [
    { type: 'text', text: 'Compare these.', cache_control: { type: 'ephemeral', ttl: '1h' } },
    { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
    { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
    {
      type: 'document',
      source: { type: 'text', media_type: 'text/plain', data: 'Paris is the capital.' },
      title: 'notes',
      citations: { enabled: true },
    },
    { type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' }, context: 'Q3 report' },
    {
      type: 'search_result',
      source: 'https://example.com/kb/1',
      title: 'Knowledge base',
      content: [{ type: 'text', text: 'Paris: 12°C, cloudy.' }],
      citations: { enabled: true },
    },
  ],
} satisfies UserMessageParam

/** A system turn inside `messages` (the SDK's `SystemMessageParam`). */
export const systemBlocks = {
  role: 'system',
  content: [{ type: 'text', text: 'Answer briefly.' }],
} satisfies SystemMessageParam

/** An assistant turn: thinking, redacted thinking, text with a citation, and two client tool calls. */
export const assistantToolUse = {
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'I should look up the weather.', signature: 'EqQBCgIYAhIM1gbcDa9GJwZA2b3h' },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4a' },
    {
      type: 'text',
      text: 'Let me check.',
      citations: [
        {
          type: 'char_location',
          cited_text: 'Paris is the capital.',
          document_index: 0,
          document_title: 'notes',
          start_char_index: 0,
          end_char_index: 21,
        },
      ],
    },
    { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris', unit: 'celsius' } },
    {
      type: 'tool_use',
      id: 'toolu_01B7dbr4Rq4Sp7zQ2w9Wtqrk',
      name: 'get_time',
      input: { tz: 'Europe/Paris' },
      cache_control: { type: 'ephemeral' },
    },
  ],
} satisfies AssistantMessageParam

/** The results of both calls in one user turn: a string result and a block result marked as an error. */
export const userToolResults = {
  role: 'user',
  content: [
    { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: '12°C, cloudy' },
    {
      type: 'tool_result',
      tool_use_id: 'toolu_01B7dbr4Rq4Sp7zQ2w9Wtqrk',
      content: [{ type: 'text', text: 'clock unavailable' }],
      is_error: true,
    },
    { type: 'text', text: 'Also, keep it short.' },
  ],
} satisfies UserMessageParam

/** Server tools: a web search and a code execution with their results in the same assistant turn. */
export const assistantServerTools = {
  role: 'assistant',
  content: [
    { type: 'server_tool_use', id: 'srvtoolu_01WYG3ziw53XMcoyKL4XcZmE', name: 'web_search', input: { query: 'paris weather' } },
    {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_01WYG3ziw53XMcoyKL4XcZmE',
      content: [
        {
          type: 'web_search_result',
          title: 'Paris weather',
          url: 'https://example.com/w',
          encrypted_content: 'EqgfCioIARgBIiQ3',
          page_age: 'April 30, 2026',
        },
      ],
    },
    { type: 'server_tool_use', id: 'srvtoolu_01C2kSc5w9bFq3nD7zLm4XyA', name: 'code_execution', input: { code: 'print(12 * 9 / 5 + 32)' } },
    {
      type: 'code_execution_tool_result',
      tool_use_id: 'srvtoolu_01C2kSc5w9bFq3nD7zLm4XyA',
      content: { type: 'code_execution_result', stdout: '53.6\n', stderr: '', return_code: 0, content: [] },
    },
    { type: 'text', text: 'It is 12°C (53.6°F).' },
  ],
} satisfies AssistantMessageParam

/** A web search that failed: its result is an error object. */
export const assistantServerToolError = {
  role: 'assistant',
  content: [
    { type: 'server_tool_use', id: 'srvtoolu_01Err0r5earchXyZ', name: 'web_search', input: { query: 'x' } },
    {
      type: 'web_search_tool_result',
      tool_use_id: 'srvtoolu_01Err0r5earchXyZ',
      content: { type: 'web_search_tool_result_error', error_code: 'max_uses_exceeded' },
    },
  ],
} satisfies AssistantMessageParam

/** A user turn uploading a file to the code-execution container. */
export const userContainerUpload = {
  role: 'user',
  content: [
    { type: 'container_upload', file_id: 'file_011CNha8iCJcU1wXNR6q4V8w' },
    { type: 'text', text: 'Analyse this CSV.' },
  ],
} satisfies UserMessageParam

/** A tool result whose content holds a search result and a tool reference. */
export const userRichToolResult = {
  role: 'user',
  content: [
    {
      type: 'tool_result',
      tool_use_id: 'toolu_01Rich',
      content: [
        { type: 'search_result', source: 'kb://1', title: 'KB', content: [{ type: 'text', text: 'found' }] },
        { type: 'tool_reference', tool_name: 'get_weather' },
      ],
    },
  ],
} satisfies UserMessageParam

/** An assistant turn that opened a call with no result recorded (the process died mid-tool). */
export const assistantUnanswered = {
  role: 'assistant',
  content: [{ type: 'tool_use', id: 'toolu_01Unanswered', name: 'get_weather', input: { city: 'Oslo' } }],
} satisfies AssistantMessageParam

/** A user turn answering a call that no assistant turn opened (an orphan result). */
export const userOrphanResult = {
  role: 'user',
  content: [{ type: 'tool_result', tool_use_id: 'toolu_01Orphan', content: 'late result' } satisfies ToolResultBlockParam],
} satisfies UserMessageParam

/**
 * A block type this SDK does not know yet (a future API kind): accepted verbatim. Cast through
 * `unknown`, as an application storing a newer SDK's payload would be.
 */
export const futureBlock = {
  type: 'hologram',
  frames: [{ at: 0, data: 'AAEC' }],
  tool_use_id: 'toolu_not_a_result',
} as unknown as ContentBlockParam

/** An assistant turn holding the future block and an unknown top-level field. */
export const assistantFuture = {
  role: 'assistant',
  content: [futureBlock, { type: 'text', text: 'Here is a hologram.' }],
  future_field: { kept: true },
} as unknown as MessageParam

/** Every fixture that must validate, by name. */
export const VALID_FIXTURES: Record<string, MessageParam> = {
  userText,
  userBlocks,
  systemBlocks,
  assistantToolUse,
  userToolResults,
  assistantServerTools,
  assistantServerToolError,
  userContainerUpload,
  userRichToolResult,
  assistantUnanswered,
  userOrphanResult,
  assistantFuture,
}

/** A response `Message` as the SDK returns it: not a payload (its `{ role, content }` is). */
export const response: AnthropicResponse = {
  id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
  type: 'message',
  role: 'assistant',
  model: 'claude-sonnet-4-5',
  content: [{ type: 'text', text: 'Hello!', citations: null }],
  stop_reason: 'end_turn',
  stop_sequence: null,
  stop_details: null,
  container: null,
  diagnostics: null,
  usage: {
    input_tokens: 12,
    output_tokens: 6,
    cache_creation_input_tokens: null,
    cache_read_input_tokens: null,
    cache_creation: null,
    server_tool_use: null,
    service_tier: 'standard',
    inference_geo: null,
    output_tokens_details: null,
    speed: 'standard',
  },
}

/** How an application stores a response: the `MessageParam` view of it (`content` is assignable). */
export const responseAsParam = { role: response.role, content: response.content } satisfies AssistantMessageParam
