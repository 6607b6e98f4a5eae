import { describe, expect, it } from '@jest/globals'
import {
  INTERRUPTED_TOOL_RESULT,
  openAIResponsesFormat,
  parseFormatPayload,
  toolPairing,
  toWire,
  type OpenAIResponsesItem,
} from '@turnlog/core'
import type {
  ResponseApplyPatchToolCallOutput,
  ResponseCustomToolCallOutput,
  ResponseInputItem,
  ResponseToolSearchOutputItemParam,
} from 'openai/resources/responses/responses'
import { INTERRUPTED_CONTENT, itemFormatChecks, itemFormatTests } from '../support/item-format-checks.js'
import * as fx from './openai-responses-fixtures.js'

const FORMAT = 'openai-responses'
const fmt = openAIResponsesFormat

const { msg, expectFreshWireCopies } = itemFormatChecks(FORMAT, fmt)

const content = INTERRUPTED_CONTENT

// each expected result is typed as the SDK's own input item: it compiles only while the SDK accepts that shape
const INTERRUPTED: [string, OpenAIResponsesItem, string, ResponseInputItem][] = [
  [
    'function_call',
    fx.functionCall,
    'call_weather_1',
    { type: 'function_call_output', call_id: 'call_weather_1', output: content } satisfies ResponseInputItem.FunctionCallOutput,
  ],
  [
    'custom_tool_call',
    fx.customToolCall,
    'call_sql_1',
    { type: 'custom_tool_call_output', call_id: 'call_sql_1', output: content } satisfies ResponseCustomToolCallOutput,
  ],
  [
    'computer_call',
    fx.computerCall,
    'call_click_1',
    {
      type: 'computer_call_output',
      call_id: 'call_click_1',
      output: { type: 'computer_screenshot' },
      status: 'incomplete',
    } satisfies ResponseInputItem.ComputerCallOutput,
  ],
  [
    'local_shell_call',
    fx.localShellCall,
    'call_ls_1',
    {
      type: 'local_shell_call_output',
      id: 'call_ls_1',
      output: content,
      status: 'incomplete',
    } satisfies ResponseInputItem.LocalShellCallOutput,
  ],
  [
    'shell_call',
    fx.shellCall,
    'call_sh_1',
    {
      type: 'shell_call_output',
      call_id: 'call_sh_1',
      output: [{ stdout: '', stderr: content, outcome: { type: 'timeout' } }],
      status: 'incomplete',
    } satisfies ResponseInputItem.ShellCallOutput,
  ],
  [
    'apply_patch_call',
    fx.applyPatchCall,
    'call_patch_1',
    { type: 'apply_patch_call_output', call_id: 'call_patch_1', status: 'failed', output: content } satisfies Omit<
      ResponseApplyPatchToolCallOutput,
      'id'
    >,
  ],
  [
    'mcp_approval_request',
    fx.mcpApprovalRequest,
    'mcpr_68aa',
    {
      type: 'mcp_approval_response',
      approval_request_id: 'mcpr_68aa',
      approve: false,
      reason: content,
    } satisfies ResponseInputItem.McpApprovalResponse,
  ],
  [
    'tool_search_call',
    { type: 'tool_search_call', call_id: 'call_ts_3', execution: 'client', arguments: {} },
    'call_ts_3',
    {
      type: 'tool_search_output',
      call_id: 'call_ts_3',
      execution: 'client',
      tools: [],
      status: 'incomplete',
    } satisfies ResponseToolSearchOutputItemParam,
  ],
]

describe('openai-responses format', () => {
  itemFormatTests(FORMAT, fmt, {
    fixtures: fx.RESPONSES_FIXTURES,
    refusals: [
      ['a function call without call_id', { type: 'function_call', name: 'f', arguments: '{}' }, 'call_id'],
      ['a function call with an empty call_id', { type: 'function_call', call_id: '', name: 'f', arguments: '{}' }, 'call_id'],
      ['a function call with arguments as an object', { type: 'function_call', call_id: 'c', name: 'f', arguments: {} }, 'arguments'],
      ['a function call output without output', { type: 'function_call_output', call_id: 'c' }, 'output'],
      ['a message with a bad role', { role: 'tool', content: 'x' }, 'role'],
      ['a message without content', { type: 'message', role: 'user' }, 'content'],
      ['an input_text part without text', { role: 'user', content: [{ type: 'input_text' }] }, 'content.0.text'],
      ['a part without a type', { role: 'user', content: [{ text: 'x' }] }, 'content.0.type'],
      ['a custom tool call output without call_id', { type: 'custom_tool_call_output', output: 'x' }, 'call_id'],
      [
        'a computer call output whose output is no screenshot',
        { type: 'computer_call_output', call_id: 'c', output: { type: 'text' } },
        'output.type',
      ],
      ['a local shell call output naming no call', { type: 'local_shell_call_output', output: 'x' }, 'id'],
      ['an approval response without approve', { type: 'mcp_approval_response', approval_request_id: 'r' }, 'approve'],
      ['a reasoning item without summary', { type: 'reasoning', id: 'rs_1' }, 'summary'],
      ['a compaction without encrypted_content', { type: 'compaction' }, 'encrypted_content'],
      ['an item reference whose id is a number', { type: 'item_reference', id: 1 }, 'id'],
      ['an item whose type is not a string', { type: 7, call_id: 'c' }, 'type'],
    ],
    pairs: fx.RESPONSES_PAIRS,
    pairedBy: 'id',
    opensNothing: {
      what: 'hosted calls that carry their own result, messages and reasoning',
      items: [
        fx.mcpCall,
        fx.mcpListTools,
        fx.fileSearchCall,
        fx.webSearchCall,
        fx.codeInterpreterCall,
        fx.imageGenerationCall,
        fx.serverToolSearchCall,
        fx.reasoning,
        fx.outputMessage,
        fx.easyUserMessage,
        fx.compactionItem,
        fx.itemReference,
        fx.futureItem,
      ],
    },
    interrupted: INTERRUPTED,
    withProviderId: fx.outputMessage,
  })

  it('refuses a payload that is not an object', () => {
    for (const bad of [null, 'hi', [fx.functionCall], 3])
      expect(() => parseFormatPayload(bad, FORMAT)).toThrow(expect.objectContaining({ code: 'INVALID_MESSAGE' }))
  })

  it('reads a local_shell_call_output that names the call by call_id as well', () => {
    expect(fmt.toolResults({ type: 'local_shell_call_output', id: 'lso_1', call_id: 'call_ls_1', output: '' })).toEqual(['call_ls_1'])
  })

  it('a client tool search pairs with its tool_search_output by call_id', () => {
    const call = {
      type: 'tool_search_call',
      call_id: 'call_ts_2',
      execution: 'client',
      arguments: {},
    } satisfies ResponseInputItem.ToolSearchCall
    const out = {
      type: 'tool_search_output',
      call_id: 'call_ts_2',
      execution: 'client',
      tools: [],
    } satisfies ResponseToolSearchOutputItemParam
    expect(fmt.toolCalls(call)).toEqual(['call_ts_2'])
    expect(fmt.toolResults(out)).toEqual(['call_ts_2'])
  })

  describe('interrupted results', () => {
    it('without the call, answers with a function_call_output', () => {
      expect(fmt.interruptedResults(['a', 'b'], content)).toEqual([
        { type: 'function_call_output', call_id: 'a', output: content },
        { type: 'function_call_output', call_id: 'b', output: content },
      ])
    })
  })

  it('toWire(…, { repairPairing }) answers an unanswered call in its own shape and drops an orphan result', () => {
    // given
    const list = [
      msg(fx.easyUserMessage),
      msg(fx.reasoning),
      msg(fx.customToolCall),
      msg({ type: 'function_call_output', call_id: 'call_orphan', output: 'late' }),
      msg(fx.outputMessage),
    ]

    // when
    const pairing = toolPairing(list)
    const wire = toWire(list, { repairPairing: true })

    // then
    expect(pairing.unanswered).toEqual([{ messageId: list[2]!.id, toolCallId: 'call_sql_1' }])
    expect(pairing.orphans).toEqual([{ messageId: list[3]!.id, toolCallId: 'call_orphan' }])
    expect(wire).toEqual([
      fx.easyUserMessage,
      fx.reasoning,
      fx.customToolCall,
      { type: 'custom_tool_call_output', call_id: 'call_sql_1', output: INTERRUPTED_TOOL_RESULT },
      fx.outputMessage,
    ])
    expect(
      toolPairing(
        wire.map((payload, i) => ({ id: list[0]!.id.replace(/.$/, String(i)) as (typeof list)[0]['id'], payload, format: FORMAT })),
      ).ok,
    ).toBe(true)
  })

  it('toWire returns a fresh, mutable deep copy equal to the payload', () => {
    expectFreshWireCopies(fx.RESPONSES_FIXTURES)
    const [wired] = toWire([msg(fx.inputMessage)])
    expect(wired).toEqual(fx.inputMessage)
    expect((wired as { content: unknown[] }).content).not.toBe(fx.inputMessage.content)
  })

  it.each(
    [
      [fx.easyUserMessage, { role: 'user', kind: 'text', text: 'What is the weather in Paris?' }],
      [fx.inputMessage, { role: 'developer', kind: 'text', text: 'Answer briefly. [input_image] [input_file]' }],
      [fx.outputMessage, { role: 'assistant', kind: 'text', text: 'It is 18 °C and sunny. I cannot share exact coordinates.' }],
      [fx.functionCall, { role: 'assistant', kind: 'tool_calls', text: 'get_weather({"city":"Paris"})' }],
      [fx.functionCallOutput, { role: 'tool', kind: 'tool_result', text: '{"temp":18}' }],
      [fx.functionCallOutputItem, { role: 'tool', kind: 'tool_result', text: 'sunny' }],
      [fx.customToolCall, { role: 'assistant', kind: 'tool_calls', text: 'run_sql(SELECT 1)' }],
      [fx.mcpApprovalResponse, { role: 'tool', kind: 'tool_result', text: 'true' }],
      [fx.reasoning, { role: 'assistant', kind: 'reasoning', text: 'Looked up the weather.' }],
      [fx.webSearchCall, { role: 'assistant', kind: 'web_search_call', text: 'completed' }],
      [fx.mcpCall, { role: 'assistant', kind: 'mcp_call', text: 'list_issues' }],
      [fx.serverToolSearchCall, { role: 'assistant', kind: 'tool_search_call', text: 'tool_search_call({"query":"weather"})' }],
      [fx.itemReference, { role: 'reference', kind: 'item_reference', text: 'msg_68a1' }],
      [fx.bareItemReference, { role: 'reference', kind: 'item_reference', text: 'msg_68a1' }],
      [fx.futureItem, { role: 'assistant', kind: 'hologram_call', text: '' }],
    ].map(([item, preview]) => [JSON.stringify(item).slice(0, 60), item, preview] as const),
  )('previews %s', (_shown, item, preview) => {
    expect(fmt.preview(item as OpenAIResponsesItem)).toEqual(preview)
  })
})
