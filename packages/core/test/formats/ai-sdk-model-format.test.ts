/** The `ai-sdk-model` format: schema, pairing by toolCallId, the interrupted tool message, the wire view, previews. */
import { describe, expect, it } from '@jest/globals'
import {
  aiSdkModelFormat,
  createMessage,
  parseFormatPayload,
  toolPairing,
  toWire,
  INTERRUPTED_TOOL_RESULT,
  type AiSdkModelMessage,
  type Message,
} from '@turnlog/core'
import { modelMessageSchema, type ModelMessage, type ToolModelMessage } from 'ai'
import * as fx from './ai-sdk-model-fixtures.js'

/** A model message typed as the SDK's own `ModelMessage` (the payload type is the caller's; the format validates it at run time). */
const model = (payload: ModelMessage): Message<ModelMessage> => createMessage<ModelMessage>(payload, { format: 'ai-sdk-model' })
const p = (payload: ModelMessage): AiSdkModelMessage => payload as unknown as AiSdkModelMessage

function issueOf(payload: unknown): { code: string | undefined; path: string | undefined } {
  try {
    parseFormatPayload(payload, 'ai-sdk-model')
  } catch (error) {
    const e = error as { code?: string; details?: { issues?: { path: string[] }[] } }
    return { code: e.code, path: e.details?.issues?.[0]?.path.join('.') }
  }
  return { code: undefined, path: undefined }
}

describe('ai-sdk-model', () => {
  it('every fixture validates and is kept verbatim (unknown part kinds and fields too)', () => {
    for (const f of fx.ALL_VALID) expect(JSON.stringify(parseFormatPayload(f, 'ai-sdk-model'))).toBe(JSON.stringify(f))
  })

  it("the fixtures with known part kinds pass the SDK's own modelMessageSchema", () => {
    for (const f of fx.ALL_VALID.filter((f) => f !== fx.futureKinds)) expect(modelMessageSchema.safeParse(f).success).toBe(true)
  })

  it('a bad message is INVALID_MESSAGE with the path of the fault', () => {
    const cases: [unknown, string][] = [
      [{ role: 'function', content: 'x' }, 'role'],
      [{ role: 'system', content: [{ type: 'text', text: 'x' }] }, 'content'],
      [{ role: 'tool', content: 'x' }, 'content'],
      [{ role: 'user', content: [{ type: 'text' }] }, 'content.0.text'],
      [{ role: 'user', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: {} }] }, 'content.0.type'],
      [{ role: 'assistant', content: [{ type: 'tool-call', toolName: 't', input: {} }] }, 'content.0.toolCallId'],
      [{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: '', toolName: 't', input: {} }] }, 'content.0.toolCallId'],
      [{ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', input: {} }] }, 'content.0.toolName'],
      [{ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't' }] }, 'content.0.output'],
      [
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'text', value: 1 } }] },
        'content.0.output.value',
      ],
      [
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'json' } }] },
        'content.0.output.value',
      ],
      [{ role: 'tool', content: [{ type: 'tool-approval-response', approvalId: 'a' }] }, 'content.0.approved'],
      [{ role: 'assistant', content: [{ type: 'tool-approval-request', approvalId: 'a' }] }, 'content.0.toolCallId'],
      [{ role: 'user', content: [{ type: 'file', data: 'AAAA' }] }, 'content.0.mediaType'],
    ]
    for (const [payload, path] of cases) expect(issueOf(payload)).toEqual({ code: 'INVALID_MESSAGE', path })
    // an unknown output type of a tool result is kept
    expect(
      issueOf({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'future', x: 1 } }] }),
    ).toEqual({ code: undefined, path: undefined })
  })

  it('tool-call parts open calls; tool-result parts (tool message, or a provider-executed result in the assistant message) answer them', () => {
    expect(aiSdkModelFormat.toolCalls(p(fx.assistantCalls))).toEqual(['call_1', 'call_2'])
    expect(aiSdkModelFormat.toolResults(p(fx.toolResults))).toEqual(['call_1', 'call_2'])
    expect(aiSdkModelFormat.toolResults(p(fx.toolMore))).toEqual(['call_3', 'call_4', 'call_5', 'call_6'])
    expect(aiSdkModelFormat.toolCalls(p(fx.assistantProviderExecuted))).toEqual(['srvtoolu_1'])
    expect(aiSdkModelFormat.toolResults(p(fx.assistantProviderExecuted))).toEqual(['srvtoolu_1'])
    expect(aiSdkModelFormat.toolCalls(p(fx.assistantString))).toEqual([])
    expect(aiSdkModelFormat.toolResults(p(fx.userParts))).toEqual([])
    const pairing = toolPairing(fx.ALL_VALID.map(model))
    expect(pairing.unanswered.map((u) => u.toolCallId)).toEqual(['call_9'])
    expect(pairing.orphans).toEqual([])
    expect(pairing.duplicates).toEqual([])
  })

  it('toWire is a fresh deep copy equal to the payload', () => {
    for (const f of fx.ALL_VALID) {
      const m = model(f)
      const [wire] = toWire([m])
      expect(wire).toEqual(f)
      expect(wire).not.toBe(m.payload)
      expect(Object.isFrozen(wire)).toBe(false)
    }
  })

  it("interruptedResults: one tool message of error-text results, named after the call's tool, valid for the format and the SDK", () => {
    const results = aiSdkModelFormat.interruptedResults(['call_1', 'call_2'], 'stopped', p(fx.assistantCalls))
    const expected = {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call_1', toolName: 'getWeather', output: { type: 'error-text', value: 'stopped' } },
        { type: 'tool-result', toolCallId: 'call_2', toolName: 'getWeather', output: { type: 'error-text', value: 'stopped' } },
      ],
    } as const satisfies ToolModelMessage
    expect(results).toEqual([expected])
    for (const r of [...results, ...aiSdkModelFormat.interruptedResults(['x'], 'stopped')]) {
      expect(parseFormatPayload(r, 'ai-sdk-model')).toEqual(r)
      expect(modelMessageSchema.safeParse(r).success).toBe(true)
    }
    expect(aiSdkModelFormat.interruptedResults([], 'x')).toEqual([])
  })

  it('the repair adds the interrupted tool message after the unanswered call and drops an orphan result, keeping the other results of its message', () => {
    const orphanAndResult = {
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'ghost', toolName: 't', output: { type: 'text', value: 'late' } },
        ...fx.toolResults.content,
      ],
    } as const satisfies ToolModelMessage
    const messages = [fx.userString, fx.assistantCalls, orphanAndResult, fx.assistantUnanswered, fx.userString].map(model)
    const pairing = toolPairing(messages)
    expect(pairing.orphans).toEqual([{ messageId: messages[2]!.id, toolCallId: 'ghost' }])
    expect(pairing.unanswered).toEqual([{ messageId: messages[3]!.id, toolCallId: 'call_9' }])
    const wire: ModelMessage[] = toWire(messages, { repairPairing: true })
    expect(wire).toEqual([
      fx.userString,
      fx.assistantCalls,
      fx.toolResults,
      fx.assistantUnanswered,
      {
        role: 'tool',
        content: [
          {
            type: 'tool-result',
            toolCallId: 'call_9',
            toolName: 'getWeather',
            output: { type: 'error-text', value: INTERRUPTED_TOOL_RESULT },
          },
        ],
      },
      fx.userString,
    ])
    expect(messages[2]!.payload).toEqual(orphanAndResult)
    // a tool message with only an orphan is not sent
    expect(toWire([model(fx.userString), model({ role: 'tool', content: [orphanAndResult.content[0]] })], { repairPairing: true })).toEqual(
      [fx.userString],
    )
  })

  it("the interrupted result goes right after the unanswered call's message, before a next assistant message that carries a provider-executed call and its result", () => {
    // given: an unanswered call, then a step whose web search the provider ran (call and result in one message)
    const unanswered = { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'z', toolName: 'lookup', input: {} }] } as const
    const searched = {
      role: 'assistant',
      content: [
        { type: 'tool-call', toolCallId: 'ws1', toolName: 'web_search', input: {}, providerExecuted: true },
        { type: 'tool-result', toolCallId: 'ws1', toolName: 'web_search', output: { type: 'text', value: 'found' } },
      ],
    } as const satisfies ModelMessage
    const messages = [fx.userString, unanswered, searched, fx.userString].map((m) => model(m as ModelMessage))

    // when
    const wire: ModelMessage[] = toWire(messages, { repairPairing: true })

    // then: before the fix the assistant message with a result counted as the call's block of results
    expect(wire.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user'])
    expect(wire[2]).toMatchObject({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'z' }] })
    expect(wire[3]).toEqual(searched)
  })

  it('preview: role, kind and text', () => {
    expect(aiSdkModelFormat.preview(p(fx.system))).toEqual({ role: 'system', kind: 'text', text: 'You are a helpful assistant.' })
    expect(aiSdkModelFormat.preview(p(fx.userParts))).toEqual({ role: 'user', kind: 'text', text: 'Look at these. [image] [file]' })
    expect(aiSdkModelFormat.preview(p(fx.assistantCalls))).toEqual({
      role: 'assistant',
      kind: 'tool_calls',
      text: '[reasoning] Two cities: two calls. Checking both. [getWeather] [getWeather]',
    })
    expect(aiSdkModelFormat.preview(p(fx.toolResults))).toEqual({ role: 'tool', kind: 'tool_result', text: '[json] 15 °C' })
  })
})
