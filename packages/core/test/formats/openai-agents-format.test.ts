import { describe, expect, it } from '@jest/globals'
import { INTERRUPTED_TOOL_RESULT, openAIAgentsFormat, toolPairing, toWire, type OpenAIAgentsItem } from '@turnlog/core'
import type {
  AgentInputItem,
  ApplyPatchCallResultItem,
  ComputerCallResultItem,
  FunctionCallResultItem,
  ShellCallResultItem,
  ToolSearchCallItem,
  ToolSearchOutputItem,
} from '@openai/agents-core'
import { INTERRUPTED_CONTENT, itemFormatChecks, itemFormatTests } from '../support/item-format-checks.js'
import * as fx from './openai-agents-fixtures.js'

const FORMAT = 'openai-agents'
const fmt = openAIAgentsFormat

const { msg, expectFreshWireCopies } = itemFormatChecks(FORMAT, fmt)

const content = INTERRUPTED_CONTENT

// each expected result is typed as the SDK's own item: it compiles only while the SDK accepts that shape
const INTERRUPTED: [string, OpenAIAgentsItem, string, AgentInputItem][] = [
  [
    'function_call',
    fx.functionCall,
    'call_weather_1',
    {
      type: 'function_call_result',
      callId: 'call_weather_1',
      name: 'get_weather',
      status: 'incomplete',
      output: content,
    } satisfies FunctionCallResultItem,
  ],
  [
    'computer_call',
    fx.computerCall,
    'call_click_1',
    {
      type: 'computer_call_result',
      callId: 'call_click_1',
      output: { type: 'computer_screenshot', data: '' },
    } satisfies ComputerCallResultItem,
  ],
  [
    'shell_call',
    fx.shellCall,
    'call_sh_1',
    {
      type: 'shell_call_output',
      callId: 'call_sh_1',
      status: 'incomplete',
      output: [{ stdout: '', stderr: content, outcome: { type: 'timeout' } }],
    } satisfies ShellCallResultItem,
  ],
  [
    'apply_patch_call',
    fx.applyPatchCall,
    'call_patch_1',
    { type: 'apply_patch_call_output', callId: 'call_patch_1', status: 'failed', output: content } satisfies ApplyPatchCallResultItem,
  ],
  [
    'tool_search_call',
    { type: 'tool_search_call', callId: 'call_ts_3', execution: 'client', arguments: {} },
    'call_ts_3',
    {
      type: 'tool_search_output',
      callId: 'call_ts_3',
      execution: 'client',
      status: 'incomplete',
      tools: [],
    } satisfies ToolSearchOutputItem,
  ],
]

describe('openai-agents format', () => {
  itemFormatTests(FORMAT, fmt, {
    fixtures: fx.AGENTS_FIXTURES,
    refusals: [
      ['a function call in snake_case (call_id)', { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, 'callId'],
      ['a function call without name', { type: 'function_call', callId: 'c', arguments: '{}' }, 'name'],
      ['a function call result without status', { type: 'function_call_result', callId: 'c', name: 'f', output: 'x' }, 'status'],
      [
        'a function call result whose output is a number',
        { type: 'function_call_result', callId: 'c', name: 'f', status: 'completed', output: 3 },
        'output',
      ],
      ['an assistant message without status', { role: 'assistant', content: [{ type: 'output_text', text: 'x' }] }, 'status'],
      ['an assistant message with string content', { role: 'assistant', status: 'completed', content: 'x' }, 'content'],
      ['a system message with parts', { role: 'system', content: [{ type: 'input_text', text: 'x' }] }, 'content'],
      ['a message with the tool role', { role: 'tool', content: 'x' }, 'role'],
      [
        'an output_text part without text',
        { role: 'assistant', status: 'completed', content: [{ type: 'output_text' }] },
        'content.0.text',
      ],
      ['a computer call without action', { type: 'computer_call', callId: 'c', status: 'completed' }, 'action'],
      ['a computer call result without output', { type: 'computer_call_result', callId: 'c' }, 'output'],
      [
        'a shell call output with no outcome',
        { type: 'shell_call_output', callId: 'c', output: [{ stdout: '', stderr: '' }] },
        'output.0.outcome',
      ],
      ['a hosted tool call without name', { type: 'hosted_tool_call' }, 'name'],
      ['a reasoning item without content', { type: 'reasoning' }, 'content'],
      ['providerData that is an array', { type: 'unknown', providerData: [] }, 'providerData'],
      ['an item whose type is not a string', { type: null, callId: 'c' }, 'type'],
    ],
    pairs: fx.AGENTS_PAIRS,
    pairedBy: 'callId',
    opensNothing: {
      what: 'hosted calls, programs, server tool searches, messages, reasoning and unknown items',
      items: [
        fx.hostedToolCall,
        fx.serverToolSearchCall,
        fx.serverToolSearchOutput,
        fx.programCall,
        fx.programOutput,
        fx.reasoning,
        fx.compaction,
        fx.unknownItem,
        fx.futureItem,
        fx.userText,
        fx.assistantMessage,
      ],
    },
    interrupted: INTERRUPTED,
    withProviderId: fx.assistantMessage,
  })

  it('a client tool search pairs with its output by callId (or call_id)', () => {
    const call = { type: 'tool_search_call', call_id: 'call_ts_2', execution: 'client', arguments: {} } satisfies ToolSearchCallItem
    const out = { type: 'tool_search_output', callId: 'call_ts_2', execution: 'client', tools: [] } satisfies ToolSearchOutputItem
    expect(fmt.toolCalls(call)).toEqual(['call_ts_2'])
    expect(fmt.toolResults(out)).toEqual(['call_ts_2'])
  })

  describe('interrupted results', () => {
    it('without the call, answers with a function_call_result with an empty name', () => {
      expect(fmt.interruptedResults(['a'], content)).toEqual([
        { type: 'function_call_result', callId: 'a', name: '', status: 'incomplete', output: content },
      ])
    })
  })

  it('toWire(…, { repairPairing }) answers an unanswered call in its own shape and drops an orphan result', () => {
    // given
    const list = [
      msg(fx.userText),
      msg(fx.reasoning),
      msg(fx.functionCall),
      msg({ type: 'function_call_result', callId: 'call_orphan', name: 'f', status: 'completed', output: 'late' }),
      msg(fx.assistantMessage),
    ]

    // when
    const pairing = toolPairing(list)
    const wire = toWire(list, { repairPairing: true })

    // then
    expect(pairing.unanswered).toEqual([{ messageId: list[2]!.id, toolCallId: 'call_weather_1' }])
    expect(pairing.orphans).toEqual([{ messageId: list[3]!.id, toolCallId: 'call_orphan' }])
    expect(wire).toEqual([
      fx.userText,
      fx.reasoning,
      fx.functionCall,
      {
        type: 'function_call_result',
        callId: 'call_weather_1',
        name: 'get_weather',
        status: 'incomplete',
        output: INTERRUPTED_TOOL_RESULT,
      },
      fx.assistantMessage,
    ])
  })

  it('toWire returns a fresh, mutable deep copy equal to the payload', () => {
    expectFreshWireCopies(fx.AGENTS_FIXTURES)
  })

  it.each([
    ['system', fx.systemMessage, { role: 'system', kind: 'text', text: 'You are a weather bot.' }],
    ['user parts', fx.userParts, { role: 'user', kind: 'text', text: 'And this map? [input_image] [input_file] [audio]' }],
    [
      'assistant',
      fx.assistantMessage,
      { role: 'assistant', kind: 'text', text: 'It is 18 °C and sunny. I cannot share exact coordinates. [audio] [image]' },
    ],
    ['function call', fx.functionCall, { role: 'assistant', kind: 'tool_calls', text: 'get_weather({"city":"Paris"})' }],
    [
      'function result (text part)',
      fx.functionCallResult,
      { role: 'tool', kind: 'tool_result', text: '{"type":"text","text":"{\\"temp\\":18}"}' },
    ],
    ['function result (string)', fx.functionCallResultString, { role: 'tool', kind: 'tool_result', text: '18' }],
    ['shell call', fx.shellCall, { role: 'assistant', kind: 'tool_calls', text: 'shell_call({"commands":["echo hi"],"timeoutMs":1000})' }],
    [
      'hosted tool call',
      fx.hostedToolCall,
      { role: 'assistant', kind: 'hosted_tool_call', text: 'web_search_call({"query":"paris weather"})' },
    ],
    ['reasoning', fx.reasoning, { role: 'assistant', kind: 'reasoning', text: 'Looked up the weather.' }],
    ['unknown', fx.unknownItem, { role: 'assistant', kind: 'unknown', text: '' }],
  ])('previews %s', (_name, item, preview) => {
    expect(fmt.preview(item as OpenAIAgentsItem)).toEqual(preview)
  })
})
