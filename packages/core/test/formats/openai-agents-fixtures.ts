/**
 * Realistic `openai-agents` payloads, each typed against the OpenAI Agents SDK's own protocol types
 * (`@openai/agents-core`, `satisfies`), so a shape drift in the SDK fails `pnpm typecheck`. One per
 * item kind: user, system and assistant messages (every content part kind), every call with its
 * result, hosted tool calls, reasoning, compaction, `unknown`, and kinds the SDK does not know yet
 * (cast: forward compatibility).
 */
import type {
  AgentInputItem,
  ApplyPatchCallItem,
  ApplyPatchCallResultItem,
  AssistantMessageItem,
  ComputerCallResultItem,
  ComputerUseCallItem,
  FunctionCallItem,
  FunctionCallResultItem,
  HostedToolCallItem,
  ProgramCallItem,
  ProgramCallResultItem,
  protocol,
  ReasoningItem,
  ShellCallItem,
  ShellCallResultItem,
  SystemMessageItem,
  ToolSearchCallItem,
  ToolSearchOutputItem,
  UnknownItem,
  UserMessageItem,
} from '@openai/agents-core'

/** A system instruction. */
export const systemMessage = { role: 'system', content: 'You are a weather bot.' } satisfies SystemMessageItem

/** A user turn with a string content. */
export const userText = { role: 'user', content: 'What is the weather in Paris?' } satisfies UserMessageItem

/** A user turn with every user part kind. */
export const userParts = {
  type: 'message',
  role: 'user',
  content: [
    { type: 'input_text', text: 'And this map?' },
    { type: 'input_image', image: 'https://example.com/map.png', detail: 'auto' },
    { type: 'input_file', file: { id: 'file-abc123' }, filename: 'notes.pdf' },
    { type: 'audio', audio: 'UklGRg==', format: 'wav', transcript: 'and this map' },
  ],
  providerData: { cache: 'ephemeral' },
} satisfies UserMessageItem

/** The assistant's answer with every assistant part kind. */
export const assistantMessage = {
  id: 'msg_68a1',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [
    { type: 'output_text', text: 'It is 18 °C and sunny.', providerData: { annotations: [] } },
    { type: 'refusal', refusal: 'I cannot share exact coordinates.' },
    { type: 'audio', audio: { id: 'audio_1' } },
    { type: 'image', image: 'iVBORw0KGgo=' },
  ],
} satisfies AssistantMessageItem

/** A function call and its result. */
export const functionCall = {
  type: 'function_call',
  id: 'fc_68a2',
  callId: 'call_weather_1',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
  status: 'completed',
} satisfies FunctionCallItem
/** The function call's result. */
export const functionCallResult = {
  type: 'function_call_result',
  callId: 'call_weather_1',
  name: 'get_weather',
  status: 'completed',
  output: { type: 'text', text: '{"temp":18}' },
} satisfies FunctionCallResultItem
/** A function call result whose output is a string. */
export const functionCallResultString = {
  type: 'function_call_result',
  callId: 'call_weather_1',
  name: 'get_weather',
  status: 'completed',
  output: '18',
} satisfies FunctionCallResultItem

/** A computer-use call (a click) and its screenshot result. */
export const computerCall = {
  type: 'computer_call',
  callId: 'call_click_1',
  status: 'completed',
  action: { type: 'click', x: 10, y: 20, button: 'left' },
} satisfies ComputerUseCallItem
/** The computer call's screenshot. */
export const computerCallResult = {
  type: 'computer_call_result',
  callId: 'call_click_1',
  output: { type: 'computer_screenshot', data: 'data:image/png;base64,iVBORw0KGgo=' },
} satisfies ComputerCallResultItem

/** A shell call and its output. */
export const shellCall = {
  type: 'shell_call',
  callId: 'call_sh_1',
  status: 'completed',
  action: { commands: ['echo hi'], timeoutMs: 1000 },
} satisfies ShellCallItem
/** The shell call's output. */
export const shellCallOutput = {
  type: 'shell_call_output',
  callId: 'call_sh_1',
  output: [{ stdout: 'hi\n', stderr: '', outcome: { type: 'exit', exitCode: 0 } }],
} satisfies ShellCallResultItem

/** An apply-patch call and its output. */
export const applyPatchCall = {
  type: 'apply_patch_call',
  callId: 'call_patch_1',
  status: 'completed',
  operation: { type: 'update_file', path: 'src/a.ts', diff: '@@ -1 +1 @@\n-a\n+b\n' },
} satisfies ApplyPatchCallItem
/** The apply-patch call's output. */
export const applyPatchCallOutput = {
  type: 'apply_patch_call_output',
  callId: 'call_patch_1',
  status: 'completed',
  output: 'patched',
} satisfies ApplyPatchCallResultItem

/** A hosted tool call (web search) that carries its own output: opens nothing. */
export const hostedToolCall = {
  type: 'hosted_tool_call',
  id: 'ws_68af',
  name: 'web_search_call',
  arguments: '{"query":"paris weather"}',
  status: 'completed',
  output: 'Sunny, 18 °C',
  providerData: { type: 'web_search_call', action: { type: 'search', query: 'paris weather' } },
} satisfies HostedToolCallItem

/** A server tool search and its output (carried by the server: opens nothing). */
export const serverToolSearchCall = {
  type: 'tool_search_call',
  callId: 'call_ts_1',
  execution: 'server',
  arguments: { query: 'weather' },
} satisfies ToolSearchCallItem
/** The server tool search's output. */
export const serverToolSearchOutput = {
  type: 'tool_search_output',
  callId: 'call_ts_1',
  execution: 'server',
  tools: [{ type: 'function', name: 'get_weather' }],
} satisfies ToolSearchOutputItem

/** A programmatic tool-calling program and its output (hosted: they open nothing). */
export const programCall = {
  type: 'program',
  callId: 'call_prog_1',
  code: 'await get_weather({city: "Paris"})',
  fingerprint: 'fp_1',
} satisfies ProgramCallItem
/** The program's output. */
export const programOutput = {
  type: 'program_output',
  callId: 'call_prog_1',
  output: '18',
  status: 'completed',
} satisfies ProgramCallResultItem

/** Reasoning with its summary text and raw content. */
export const reasoning = {
  type: 'reasoning',
  id: 'rs_68ad',
  content: [{ type: 'input_text', text: 'Looked up the weather.' }],
  rawContent: [{ type: 'reasoning_text', text: 'The user wants Paris.' }],
  providerData: { encryptedContent: 'gAAAAB…' },
} satisfies ReasoningItem

/** A compaction item. */
export const compaction = { type: 'compaction', id: 'cmp_68b3', encrypted_content: 'gAAAAC…' } satisfies protocol.CompactionItem

/** An item the SDK itself could not classify. */
export const unknownItem = { type: 'unknown', id: 'x_1', providerData: { type: 'brand_new_item', value: 1 } } satisfies UnknownItem

/** A kind this SDK version does not know (a future item): kept verbatim. */
export const futureItem = { type: 'hologram_call', callId: 'call_holo', providerData: { depth: 3 } } as unknown as AgentInputItem

/** A user message with a part kind the SDK does not know yet. */
export const futurePartMessage = {
  role: 'user',
  content: [
    { type: 'input_text', text: 'look' },
    { type: 'input_video', video: 'https://example.com/v.mp4' },
  ],
} as unknown as UserMessageItem

/** Every valid fixture, by name. */
export const AGENTS_FIXTURES: Readonly<Record<string, AgentInputItem>> = {
  systemMessage,
  userText,
  userParts,
  assistantMessage,
  functionCall,
  functionCallResult,
  functionCallResultString,
  computerCall,
  computerCallResult,
  shellCall,
  shellCallOutput,
  applyPatchCall,
  applyPatchCallOutput,
  hostedToolCall,
  serverToolSearchCall,
  serverToolSearchOutput,
  programCall,
  programOutput,
  reasoning,
  compaction,
  unknownItem,
  futureItem,
  futurePartMessage,
}

/** The call/result pairs: the calling fixture, its result, and the call id. */
export const AGENTS_PAIRS = [
  { call: functionCall, result: functionCallResult, id: 'call_weather_1' },
  { call: computerCall, result: computerCallResult, id: 'call_click_1' },
  { call: shellCall, result: shellCallOutput, id: 'call_sh_1' },
  { call: applyPatchCall, result: applyPatchCallOutput, id: 'call_patch_1' },
] as const
