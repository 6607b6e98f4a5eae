/**
 * Realistic `openai-responses` payloads, each typed against the `openai` SDK's own Responses types
 * (`satisfies`), so a shape drift in the SDK fails `pnpm typecheck`. One per item kind: messages
 * (easy input, input, output), every call with its result, reasoning, hosted tools, compaction,
 * item references, and kinds the SDK does not know yet (cast: forward compatibility).
 */
import type {
  EasyInputMessage,
  ResponseApplyPatchToolCall,
  ResponseApplyPatchToolCallOutput,
  ResponseCodeInterpreterToolCall,
  ResponseCompactionItem,
  ResponseCompactionItemParam,
  ResponseComputerToolCall,
  ResponseCustomToolCall,
  ResponseCustomToolCallOutput,
  ResponseFileSearchToolCall,
  ResponseFunctionShellToolCall,
  ResponseFunctionShellToolCallOutput,
  ResponseFunctionToolCall,
  ResponseFunctionToolCallOutputItem,
  ResponseFunctionWebSearch,
  ResponseInputItem,
  ResponseOutputItem,
  ResponseOutputMessage,
  ResponseReasoningItem,
} from 'openai/resources/responses/responses'

/** A user turn as the easy input message (content a string). */
export const easyUserMessage = { role: 'user', content: 'What is the weather in Paris?' } satisfies EasyInputMessage

/** A developer instruction as an input message with parts, including an image. */
export const inputMessage = {
  type: 'message',
  role: 'developer',
  content: [
    { type: 'input_text', text: 'Answer briefly.' },
    { type: 'input_image', detail: 'auto', image_url: 'https://example.com/map.png' },
    { type: 'input_file', file_id: 'file-abc123', filename: 'notes.pdf' },
  ],
} satisfies ResponseInputItem.Message

/** The model's answer: an output message with text (with a citation) and a refusal part. */
export const outputMessage = {
  id: 'msg_68a1',
  type: 'message',
  role: 'assistant',
  status: 'completed',
  content: [
    {
      type: 'output_text',
      text: 'It is 18 °C and sunny.',
      annotations: [{ type: 'url_citation', url: 'https://weather.example', title: 'Weather', start_index: 0, end_index: 5 }],
    },
    { type: 'refusal', refusal: 'I cannot share exact coordinates.' },
  ],
} satisfies ResponseOutputMessage

/** A function call the application must answer. */
export const functionCall = {
  type: 'function_call',
  id: 'fc_68a2',
  call_id: 'call_weather_1',
  name: 'get_weather',
  arguments: '{"city":"Paris"}',
  status: 'completed',
} satisfies ResponseFunctionToolCall

/** Its output (as the application sends it back). */
export const functionCallOutput = {
  type: 'function_call_output',
  call_id: 'call_weather_1',
  output: '{"temp":18}',
} satisfies ResponseInputItem.FunctionCallOutput

/** A function call output as the API returns it in a conversation (output as parts). */
export const functionCallOutputItem = {
  type: 'function_call_output',
  id: 'fco_68a3',
  call_id: 'call_weather_1',
  status: 'completed',
  output: [{ type: 'input_text', text: 'sunny' }],
} satisfies ResponseFunctionToolCallOutputItem

/** A custom (free-form input) tool call and its output. */
export const customToolCall = {
  type: 'custom_tool_call',
  call_id: 'call_sql_1',
  name: 'run_sql',
  input: 'SELECT 1',
} satisfies ResponseCustomToolCall
/** The custom tool call's output. */
export const customToolCallOutput = {
  type: 'custom_tool_call_output',
  call_id: 'call_sql_1',
  output: '1 row',
} satisfies ResponseCustomToolCallOutput

/** A computer-use call (a click) and its screenshot output. */
export const computerCall = {
  type: 'computer_call',
  id: 'cu_68a4',
  call_id: 'call_click_1',
  status: 'completed',
  pending_safety_checks: [],
  action: { type: 'click', button: 'left', x: 10, y: 20 },
} satisfies ResponseComputerToolCall
/** The computer call's screenshot. */
export const computerCallOutput = {
  type: 'computer_call_output',
  call_id: 'call_click_1',
  output: { type: 'computer_screenshot', image_url: 'data:image/png;base64,iVBORw0KGgo=' },
} satisfies ResponseInputItem.ComputerCallOutput

/** A local shell call (codex models) and its output, which names the call by `id` (the SDK's type). */
export const localShellCall = {
  type: 'local_shell_call',
  id: 'lsh_68a5',
  call_id: 'call_ls_1',
  status: 'completed',
  action: { type: 'exec', command: ['ls', '-la'], env: {} },
} satisfies ResponseInputItem.LocalShellCall
/** The local shell call's output. */
export const localShellCallOutput = {
  type: 'local_shell_call_output',
  id: 'call_ls_1',
  output: '{"stdout":"total 0"}',
} satisfies ResponseInputItem.LocalShellCallOutput

/** A shell tool call and its output. */
export const shellCall = {
  type: 'shell_call',
  id: 'sh_68a6',
  call_id: 'call_sh_1',
  status: 'completed',
  environment: null,
  action: { commands: ['echo hi'], timeout_ms: 1000, max_output_length: 4096 },
} satisfies ResponseFunctionShellToolCall
/** The shell call's output. */
export const shellCallOutput = {
  type: 'shell_call_output',
  id: 'sho_68a7',
  call_id: 'call_sh_1',
  status: 'completed',
  max_output_length: 4096,
  output: [{ stdout: 'hi\n', stderr: '', outcome: { type: 'exit', exit_code: 0 } }],
} satisfies ResponseFunctionShellToolCallOutput

/** An apply-patch call and its output. */
export const applyPatchCall = {
  type: 'apply_patch_call',
  id: 'ap_68a8',
  call_id: 'call_patch_1',
  status: 'completed',
  operation: { type: 'update_file', path: 'src/a.ts', diff: '@@ -1 +1 @@\n-a\n+b\n' },
} satisfies ResponseApplyPatchToolCall
/** The apply-patch call's output. */
export const applyPatchCallOutput = {
  type: 'apply_patch_call_output',
  id: 'apo_68a9',
  call_id: 'call_patch_1',
  status: 'completed',
  output: 'patched',
} satisfies ResponseApplyPatchToolCallOutput

/** An MCP approval request and the application's approval. */
export const mcpApprovalRequest = {
  type: 'mcp_approval_request',
  id: 'mcpr_68aa',
  name: 'delete_repo',
  arguments: '{"repo":"x"}',
  server_label: 'github',
} satisfies ResponseInputItem.McpApprovalRequest
/** The approval. */
export const mcpApprovalResponse = {
  type: 'mcp_approval_response',
  approval_request_id: 'mcpr_68aa',
  approve: true,
} satisfies ResponseInputItem.McpApprovalResponse

/** A hosted MCP call (carries its own output: opens nothing). */
export const mcpCall = {
  type: 'mcp_call',
  id: 'mcp_68ab',
  name: 'list_issues',
  arguments: '{}',
  server_label: 'github',
  output: '[]',
  status: 'completed',
} satisfies ResponseInputItem.McpCall
/** The tools an MCP server listed. */
export const mcpListTools = {
  type: 'mcp_list_tools',
  id: 'mcpl_68ac',
  server_label: 'github',
  tools: [{ name: 'list_issues', input_schema: { type: 'object' } }],
} satisfies ResponseInputItem.McpListTools

/** Reasoning with a summary, raw content and encrypted content. */
export const reasoning = {
  type: 'reasoning',
  id: 'rs_68ad',
  summary: [{ type: 'summary_text', text: 'Looked up the weather.' }],
  content: [{ type: 'reasoning_text', text: 'The user wants Paris.' }],
  encrypted_content: 'gAAAAB…',
} satisfies ResponseReasoningItem

/** Hosted tool calls that carry their own results. */
export const fileSearchCall = {
  type: 'file_search_call',
  id: 'fs_68ae',
  queries: ['refund policy'],
  status: 'completed',
  results: [{ file_id: 'file-1', filename: 'policy.md', score: 0.9, text: 'Refunds within 30 days.' }],
} satisfies ResponseFileSearchToolCall
/** A hosted web search. */
export const webSearchCall = {
  type: 'web_search_call',
  id: 'ws_68af',
  status: 'completed',
  action: { type: 'search', query: 'paris weather' },
} satisfies ResponseFunctionWebSearch
/** A hosted code interpreter run. */
export const codeInterpreterCall = {
  type: 'code_interpreter_call',
  id: 'ci_68b0',
  code: 'print(1+1)',
  container_id: 'cntr_1',
  status: 'completed',
  outputs: [{ type: 'logs', logs: '2' }],
} satisfies ResponseCodeInterpreterToolCall
/** A hosted image generation. */
export const imageGenerationCall = {
  type: 'image_generation_call',
  id: 'ig_68b1',
  status: 'completed',
  result: 'iVBORw0KGgo=',
} satisfies ResponseInputItem.ImageGenerationCall
/** A server-executed tool search and its output (one item pair the server carries: opens nothing). */
export const serverToolSearchCall = {
  type: 'tool_search_call',
  id: 'ts_68b2',
  call_id: 'call_ts_1',
  execution: 'server',
  status: 'completed',
  arguments: { query: 'weather' },
} satisfies ResponseOutputItem

/** A compaction item as the API returns it and as it is sent back. */
export const compactionItem = { type: 'compaction', id: 'cmp_68b3', encrypted_content: 'gAAAAC…' } satisfies ResponseCompactionItem
/** The compaction item as a param. */
export const compactionParam = { type: 'compaction', encrypted_content: 'gAAAAC…' } satisfies ResponseCompactionItemParam

/** A reference to an item stored by the API (with and without its type). */
export const itemReference = { type: 'item_reference', id: 'msg_68a1' } satisfies ResponseInputItem.ItemReference
/** An item reference without its `type`. */
export const bareItemReference = { id: 'msg_68a1' } satisfies ResponseInputItem.ItemReference

/** A kind this SDK does not know (a future item): kept verbatim. */
export const futureItem = { type: 'hologram_call', id: 'hg_1', call_id: 'call_holo', payload: { depth: 3 } } as unknown as ResponseInputItem

/** A known message with a part kind the SDK does not know yet. */
export const futurePartMessage = {
  role: 'user',
  content: [
    { type: 'input_text', text: 'look' },
    { type: 'input_video', video_url: 'https://example.com/v.mp4' },
  ],
} as unknown as EasyInputMessage

/** Every valid fixture, by name. */
export const RESPONSES_FIXTURES: Readonly<Record<string, ResponseInputItem | ResponseOutputItem>> = {
  easyUserMessage,
  inputMessage,
  outputMessage,
  functionCall,
  functionCallOutput,
  functionCallOutputItem,
  customToolCall,
  customToolCallOutput,
  computerCall,
  computerCallOutput,
  localShellCall,
  localShellCallOutput,
  shellCall,
  shellCallOutput,
  applyPatchCall,
  applyPatchCallOutput,
  mcpApprovalRequest,
  mcpApprovalResponse,
  mcpCall,
  mcpListTools,
  reasoning,
  fileSearchCall,
  webSearchCall,
  codeInterpreterCall,
  imageGenerationCall,
  serverToolSearchCall,
  compactionItem,
  compactionParam,
  itemReference,
  bareItemReference,
  futureItem,
  futurePartMessage,
}

/** The call/result pairs: the calling fixture, its result, the call id, and the result kind. */
export const RESPONSES_PAIRS = [
  { call: functionCall, result: functionCallOutput, id: 'call_weather_1' },
  { call: customToolCall, result: customToolCallOutput, id: 'call_sql_1' },
  { call: computerCall, result: computerCallOutput, id: 'call_click_1' },
  { call: localShellCall, result: localShellCallOutput, id: 'call_ls_1' },
  { call: shellCall, result: shellCallOutput, id: 'call_sh_1' },
  { call: applyPatchCall, result: applyPatchCallOutput, id: 'call_patch_1' },
  { call: mcpApprovalRequest, result: mcpApprovalResponse, id: 'mcpr_68aa' },
] as const
