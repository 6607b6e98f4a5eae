/** The `ai-sdk-ui` format: schema, pairing by part state, the in-place repair, the wire view, previews, and the SDK's own validation. */
import { describe, expect, it } from '@jest/globals'
import {
  aiSdkUiFormat,
  createMessage,
  messageIdFromExternal,
  parseFormatPayload,
  toolPairing,
  toWire,
  INTERRUPTED_TOOL_RESULT,
  type AiSdkUiMessage,
  type Message,
} from '@turnlog/core'
import { convertToModelMessages, validateUIMessages, type UIMessage } from 'ai'
import * as fx from './ai-sdk-ui-fixtures.js'

/** A UI message typed as the SDK's own `UIMessage` (the payload type is the caller's; the format validates it at run time). */
const ui = (payload: UIMessage): Message<UIMessage> => createMessage<UIMessage>(payload, { format: 'ai-sdk-ui' })

function issueOf(payload: unknown): { code: string | undefined; message: string; path: string | undefined } {
  try {
    parseFormatPayload(payload, 'ai-sdk-ui')
  } catch (error) {
    const e = error as { code?: string; message: string; details?: { issues?: { path: string[] }[] } }
    return { code: e.code, message: e.message, path: e.details?.issues?.[0]?.path.join('.') }
  }
  return { code: undefined, message: 'accepted', path: undefined }
}

describe('ai-sdk-ui', () => {
  it('every fixture validates and is kept verbatim (unknown part kinds and fields too)', () => {
    for (const f of fx.ALL_VALID) expect(parseFormatPayload(f, 'ai-sdk-ui')).toEqual(f)
    expect(JSON.stringify(parseFormatPayload(fx.futureKinds, 'ai-sdk-ui'))).toBe(JSON.stringify(fx.futureKinds))
  })

  it("the fixtures pass the SDK's own validateUIMessages", async () => {
    await expect(validateUIMessages({ messages: [...fx.SDK_VALID] })).resolves.toHaveLength(fx.SDK_VALID.length)
  })

  it('a bad message is INVALID_MESSAGE with the path of the fault', () => {
    const cases: [unknown, string][] = [
      [{ role: 'user', parts: [] }, 'id'],
      [{ id: 'a', role: 'tool', parts: [] }, 'role'],
      [{ id: 'a', role: 'user' }, 'parts'],
      [{ id: 'a', role: 'user', parts: [{ type: 'text' }] }, 'parts.0.text'],
      [{ id: 'a', role: 'user', parts: [{ text: 'x' }] }, 'parts.0.type'],
      [{ id: 'a', role: 'assistant', parts: [{ type: 'tool-x', state: 'input-available', input: {} }] }, 'parts.0.toolCallId'],
      [{ id: 'a', role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'c', state: 'done' }] }, 'parts.0.state'],
      [{ id: 'a', role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'c', state: 'output-error', input: {} }] }, 'parts.0.errorText'],
      [
        { id: 'a', role: 'assistant', parts: [{ type: 'tool-x', toolCallId: 'c', state: 'approval-requested', input: {} }] },
        'parts.0.approval',
      ],
      [
        { id: 'a', role: 'assistant', parts: [{ type: 'dynamic-tool', toolCallId: 'c', state: 'input-available', input: {} }] },
        'parts.0.toolName',
      ],
      [{ id: 'a', role: 'assistant', parts: [{ type: 'file', url: 'u' }] }, 'parts.0.mediaType'],
      [{ id: 'a', role: 'assistant', parts: [{ type: 'source-url', sourceId: 's' }] }, 'parts.0.url'],
      [{ id: 'a', role: 'assistant', parts: [{ type: 'data-x' }] }, 'parts.0.data'],
    ]
    for (const [payload, path] of cases) expect(issueOf(payload)).toEqual(expect.objectContaining({ code: 'INVALID_MESSAGE', path }))
    expect(issueOf({ id: 'a', role: 'user', parts: [{ type: 'text' }] }).message).toContain('ai-sdk-ui message at parts.0.text')
  })

  it('a tool part opens its call and, in a result state, answers it in the same message', () => {
    expect(aiSdkUiFormat.toolCalls(fx.assistantAnswered as unknown as AiSdkUiMessage)).toEqual(['call-weather-1'])
    expect(aiSdkUiFormat.toolResults(fx.assistantAnswered as unknown as AiSdkUiMessage)).toEqual(['call-weather-1'])
    expect(aiSdkUiFormat.toolCalls(fx.assistantStates as unknown as AiSdkUiMessage)).toEqual([
      'call-s-1',
      'call-d-1',
      'call-d-2',
      'call-d-3',
      'call-weather-3',
      'call-dyn-1',
      'srvtoolu_01',
    ])
    expect(aiSdkUiFormat.toolResults(fx.assistantStates as unknown as AiSdkUiMessage)).toEqual([
      'call-d-3',
      'call-weather-3',
      'call-dyn-1',
      'srvtoolu_01',
    ])
    expect(aiSdkUiFormat.toolCalls(fx.userText as unknown as AiSdkUiMessage)).toEqual([])
    const pairing = toolPairing(fx.ALL_VALID.map(ui))
    expect(pairing.unanswered.map((u) => u.toolCallId)).toEqual(['call-weather-2', 'call-s-1', 'call-d-1', 'call-d-2', 'call-dyn-2'])
    expect(pairing.orphans).toEqual([])
  })

  it('toWire is a fresh deep copy equal to the UIMessage (its id kept verbatim)', () => {
    for (const f of fx.ALL_VALID) {
      const m = ui(f)
      const [wire] = toWire([m])
      expect(wire).toEqual(f)
      expect(wire).not.toBe(m.payload)
      expect(Object.isFrozen(wire)).toBe(false)
      expect(wire?.parts[0]).not.toBe(m.payload.parts[0])
      expect(wire?.id).toBe(f.id)
    }
  })

  it('the repair rewrites each unanswered part to output-error in the wire copy; the log is unchanged; the SDK accepts the result', async () => {
    const messages = [fx.userText, fx.assistantUnanswered, fx.assistantStates, fx.assistantDynamicPending].map(ui)
    const wire: UIMessage[] = toWire(messages, { repairPairing: true })
    expect(wire).toHaveLength(4)
    expect(toolPairing(wire.map((payload, i) => ({ id: messages[i]!.id, payload, format: 'ai-sdk-ui' }))).ok).toBe(true)
    expect(wire[1]?.parts[1]).toEqual({
      type: 'tool-getWeather',
      toolCallId: 'call-weather-2',
      state: 'output-error',
      input: { city: 'Lyon' },
      errorText: INTERRUPTED_TOOL_RESULT,
    })
    expect(wire[2]?.parts[0]).toEqual({
      type: 'tool-search',
      toolCallId: 'call-s-1',
      state: 'output-error',
      input: { query: 'par' },
      rawInput: '{"query":"par',
      errorText: INTERRUPTED_TOOL_RESULT,
    })
    // a requested approval is dropped (output-error carries only a granted one); a granted one is kept
    expect(wire[2]?.parts[1]).toEqual({
      type: 'tool-deleteFile',
      toolCallId: 'call-d-1',
      state: 'output-error',
      input: { path: '/tmp/a' },
      errorText: INTERRUPTED_TOOL_RESULT,
    })
    expect(wire[2]?.parts[2]).toEqual(
      expect.objectContaining({ state: 'output-error', approval: { id: 'appr-2', approved: true, reason: 'ok' } }),
    )
    expect(wire[2]?.parts.slice(3)).toEqual(fx.assistantStates.parts.slice(3))
    expect(wire[3]?.parts[1]).toEqual(expect.objectContaining({ type: 'dynamic-tool', toolName: 'mcp_fetch', state: 'output-error' }))
    expect(messages[1]?.payload).toEqual(fx.assistantUnanswered)
    await expect(validateUIMessages({ messages: wire })).resolves.toHaveLength(4)
    // the SDK turns each rewritten part into an error-text tool result: its model messages pair
    const modelMessages = await convertToModelMessages(wire)
    expect(toolPairing(modelMessages.map((payload) => createMessage(payload, { format: 'ai-sdk-model' }))).ok).toBe(true)
    expect(JSON.stringify(modelMessages)).toContain(JSON.stringify({ type: 'error-text', value: INTERRUPTED_TOOL_RESULT }))
  })

  it('two open parts of one call in one message: the repair answers the first and leaves the second out of the wire copy; the SDK model messages pair', async () => {
    const open = fx.assistantUnanswered.parts[1]
    const twice = {
      id: 'msg-twice',
      role: 'assistant',
      parts: [open, { type: 'text', text: 'between' }, open],
    } as const satisfies UIMessage
    const messages = [ui(fx.userText), ui(twice)]
    expect(toolPairing(messages).unanswered.map((u) => u.toolCallId)).toEqual([open.toolCallId])

    const wire: UIMessage[] = toWire(messages, { repairPairing: true })

    expect(wire[1]?.parts).toEqual([
      expect.objectContaining({ toolCallId: open.toolCallId, state: 'output-error', errorText: INTERRUPTED_TOOL_RESULT }),
      { type: 'text', text: 'between' },
    ])
    expect(messages[1]?.payload).toEqual(twice)
    const modelMessages = await convertToModelMessages(wire)
    expect(toolPairing(modelMessages.map((payload) => createMessage(payload, { format: 'ai-sdk-model' }))).ok).toBe(true)
  })

  describe('an open part and the answered part of one call: the wire copy keeps the answered part, never the open one', () => {
    const answered = fx.assistantAnswered.parts[2]
    const open = { type: 'tool-getWeather', toolCallId: answered.toolCallId, state: 'input-available', input: { city: 'Paris' } } as const
    const text = { type: 'text', text: 'between' } as const
    /** The model messages of a wire copy pair (what the provider checks), and every UI message validates. */
    async function expectProviderAccepts(wire: UIMessage[]): Promise<void> {
      await expect(validateUIMessages({ messages: wire })).resolves.toHaveLength(wire.length)
      const modelMessages = await convertToModelMessages(wire)
      const model = toolPairing(modelMessages.map((payload) => createMessage(payload, { format: 'ai-sdk-model' })))
      expect(model).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
    }

    it.each([
      ['answered first, open after it', [answered, text, open]],
      ['open first, answered after it', [open, text, answered]],
    ] as const)(
      'in one message (%s): pairing reports the duplicate call; the repair sends the answered part only',
      async (_order, parts) => {
        const m = ui({ id: 'msg-both', role: 'assistant', parts: [...parts] })
        const messages = [ui(fx.userText), m]
        const pairing = toolPairing(messages)
        expect(pairing.duplicateCalls).toEqual([{ toolCallId: answered.toolCallId, messageIds: [m.id, m.id] }])
        expect(pairing.ok).toBe(false)

        const wire: UIMessage[] = toWire(messages, { repairPairing: true })

        expect(wire[1]?.parts).toEqual(parts.filter((p) => p !== open))
        expect(toolPairing(wire.map((payload, i) => ({ id: messages[i]!.id, payload, format: 'ai-sdk-ui' }))).ok).toBe(true)
        await expectProviderAccepts(wire)
        expect(m.payload.parts).toEqual(parts)
      },
    )

    it.each([
      ['the open part in an earlier message', 'open-then-answered'],
      ['the open part in a later message', 'answered-then-open'],
    ] as const)(
      'across messages (%s): the message with the open part goes without it, or not at all when nothing else is left',
      async (_order, order) => {
        const withOpen = ui({ id: 'msg-open', role: 'assistant', parts: [open, text] })
        const onlyOpen = ui({ id: 'msg-only-open', role: 'assistant', parts: [open] })
        const withAnswer = ui({ id: 'msg-answered', role: 'assistant', parts: [answered] })
        for (const stale of [withOpen, onlyOpen]) {
          const messages = order === 'open-then-answered' ? [ui(fx.userText), stale, withAnswer] : [ui(fx.userText), withAnswer, stale]
          expect(toolPairing(messages).duplicateCalls).toEqual([
            { toolCallId: answered.toolCallId, messageIds: [messages[1]!.id, messages[2]!.id] },
          ])

          const wire: UIMessage[] = toWire(messages, { repairPairing: true })

          const expected = messages
            .map((m) => m.payload)
            .flatMap((p) => (p === stale.payload ? (stale === withOpen ? [{ ...p, parts: [text] }] : []) : [p]))
          expect(wire).toEqual(expected)
          await expectProviderAccepts(wire)
        }
      },
    )
  })

  it('a second result for one call (the same tool part in a later message) is dropped from the wire copy, the rest of that message kept', () => {
    const later = {
      id: 'msg-later',
      role: 'assistant',
      parts: [fx.assistantAnswered.parts[2], { type: 'text', text: 'again' }],
    } as const satisfies UIMessage
    const messages = [fx.assistantAnswered, later].map(ui)
    expect(toolPairing(messages).duplicates).toEqual([{ toolCallId: 'call-weather-1', messageIds: [messages[0]!.id, messages[1]!.id] }])
    const wire: UIMessage[] = toWire(messages, { repairPairing: true })
    expect(wire[1]).toEqual({ id: 'msg-later', role: 'assistant', parts: [{ type: 'text', text: 'again' }] })
    expect(
      toWire([ui(fx.assistantAnswered), ui({ id: 'only', role: 'assistant', parts: [fx.assistantAnswered.parts[2]] })], {
        repairPairing: true,
      }),
    ).toHaveLength(1)
  })

  it('interruptedResults is an assistant UIMessage of output-error parts that the format and the SDK accept', async () => {
    const [result] = aiSdkUiFormat.interruptedResults(['call-weather-2'], 'stopped', fx.assistantUnanswered as unknown as AiSdkUiMessage)
    const expected = {
      id: 'msg-assistant-2-interrupted',
      role: 'assistant',
      parts: [
        { type: 'tool-getWeather', toolCallId: 'call-weather-2', state: 'output-error', input: { city: 'Lyon' }, errorText: 'stopped' },
      ],
    } as const satisfies UIMessage
    expect(result).toEqual(expected)
    expect(parseFormatPayload(result, 'ai-sdk-ui')).toEqual(result)
    const [bare] = aiSdkUiFormat.interruptedResults(['x'], 'stopped')
    expect(parseFormatPayload(bare, 'ai-sdk-ui')).toEqual(bare)
    await expect(validateUIMessages({ messages: [result, bare] as unknown as UIMessage[] })).resolves.toHaveLength(2)
    expect(aiSdkUiFormat.interruptedResults([], 'x')).toEqual([])
  })

  it("the UIMessage id is the client's: kept verbatim, never turnlog's id; externalId + scope derive a stable id from it", () => {
    const minted = ui(fx.userText)
    expect(minted.id).not.toBe(fx.userText.id)
    expect(minted.payload.id).toBe(fx.userText.id)
    const derived = createMessage<UIMessage>(fx.userText, { format: 'ai-sdk-ui', externalId: fx.userText.id, scope: 'ai-sdk:chat-1' })
    expect(derived.id).toBe(messageIdFromExternal(fx.userText.id, 'ai-sdk:chat-1'))
    expect(createMessage<UIMessage>(fx.userText, { format: 'ai-sdk-ui', externalId: fx.userText.id, scope: 'ai-sdk:chat-1' }).id).toBe(
      derived.id,
    )
    expect(derived.payload).toEqual(fx.userText)
  })

  it('preview: role, kind and the text of the parts', () => {
    expect(aiSdkUiFormat.preview(fx.userText as unknown as AiSdkUiMessage)).toEqual({
      role: 'user',
      kind: 'text',
      text: 'What is the weather in Paris? Also see the attached chart. [file]',
    })
    expect(aiSdkUiFormat.preview(fx.assistantUnanswered as unknown as AiSdkUiMessage)).toEqual({
      role: 'assistant',
      kind: 'tool_calls',
      text: '[step-start] [getWeather input-available]',
    })
    expect(aiSdkUiFormat.preview(fx.assistantAnswered as unknown as AiSdkUiMessage)).toEqual(
      expect.objectContaining({ kind: 'tool_result' }),
    )
    expect(aiSdkUiFormat.preview(fx.assistantAnswered as unknown as AiSdkUiMessage).text).toContain(
      '[reasoning] The user wants the weather',
    )
    expect(aiSdkUiFormat.preview(fx.futureKinds as unknown as AiSdkUiMessage)).toEqual({
      role: 'assistant',
      kind: 'text',
      text: '[citation-card] hello',
    })
  })
})
