import { describe, expect, it } from '@jest/globals'
import { newSessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { generateText, modelMessageSchema, stepCountIs, type ModelMessage } from 'ai'
import { MockLanguageModelV3 } from 'ai/test'
import { startModelTurn } from '@turnlog/ai-sdk'
import { tools } from './chat-fixture.js'
import { STORE_KINDS, useTestStoreOfKind } from './store-kinds.js'

type GenerateResult = Awaited<ReturnType<MockLanguageModelV3['doGenerate']>>

const usage = {
  inputTokens: { total: 3, noCache: 3, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
}
const toolCall = (toolCallId: string, city: string): GenerateResult => ({
  content: [{ type: 'tool-call', toolCallId, toolName: 'weather', input: JSON.stringify({ city }) }],
  finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
  usage,
  warnings: [],
})
const text = (value: string): GenerateResult => ({
  content: [{ type: 'text', text: value }],
  finishReason: { unified: 'stop', raw: 'stop' },
  usage,
  warnings: [],
})

/** A model whose n-th `doGenerate` call returns `script[n]`. */
function scripted(script: readonly GenerateResult[]): MockLanguageModelV3 {
  let call = 0
  return new MockLanguageModelV3({
    doGenerate: async () => {
      const result = script[call++]
      if (result === undefined) throw new Error('no more scripted steps')
      return result
    },
  })
}

describe.each(STORE_KINDS)('generateText ModelMessage turns on %s', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('stores the input before the call and each step as it lands; the next turn sends the history', async () => {
    // given
    const session = newSessionId()
    const model = scripted([toolCall('c1', 'Paris'), toolCall('c2', 'Oslo'), text('Paris is warmer.'), text('Bye.')])
    const question: ModelMessage = { role: 'user', content: 'Paris or Oslo?' }
    const seen: number[] = []
    // when
    const turn = await startModelTurn(store, session, [question])
    expect((await store.load(session)).messages.map((m) => m.payload)).toEqual([question]) // durable before the model runs
    const result = await generateText({
      model,
      tools,
      messages: turn.messages,
      stopWhen: stepCountIs(5),
      onStepFinish: async (step) => {
        await turn.onStepFinish(step)
        seen.push((await store.load(session)).messages.length)
      },
      onFinish: turn.onFinish,
    })
    // then: each step's assistant message and tool results stored at its end; the same history loads back
    expect(seen).toEqual([3, 5, 6])
    const stored = (await store.load(session)).messages.map((m) => m.payload as ModelMessage)
    expect(stored).toEqual(JSON.parse(JSON.stringify([question, ...result.response.messages])))
    for (const m of stored) expect(modelMessageSchema.safeParse(m).success).toBe(true)
    // the next turn: history + the new question, and the model sees exactly that
    const next = await startModelTurn(store, session, [{ role: 'user', content: 'Thanks' }])
    expect(next.messages).toEqual([...stored, { role: 'user', content: 'Thanks' }])
    const second = await generateText({ model, messages: next.messages, onStepFinish: next.onStepFinish, onFinish: next.onFinish })
    expect(model.doGenerateCalls.at(-1)?.prompt.length).toBe(next.messages.length)
    expect((await store.load(session)).messages.map((m) => m.payload)).toEqual(
      JSON.parse(JSON.stringify([...next.messages, ...second.response.messages])),
    )
  })

  it('a retried turn (same turnId) stores its input once; a callback run twice writes nothing twice', async () => {
    // given
    const session = newSessionId()
    const question: ModelMessage = { role: 'user', content: [{ type: 'text', text: 'hello' }] }
    const first = await startModelTurn(store, session, [question], { turnId: 'req-1' })
    // when
    const retry = await startModelTurn(store, session, [question], { turnId: 'req-1' })
    const result = await generateText({ model: scripted([text('Hi.')]), messages: retry.messages })
    await retry.onStepFinish(result.steps[0] as { response: { messages: ModelMessage[] } })
    await retry.onFinish(result)
    // then
    expect(first.messages).toEqual([question])
    expect(retry.messages).toEqual([question])
    expect((await store.load(session)).messages.map((m) => m.payload)).toEqual([
      question,
      { role: 'assistant', content: [{ type: 'text', text: 'Hi.' }] },
    ])
  })
})
