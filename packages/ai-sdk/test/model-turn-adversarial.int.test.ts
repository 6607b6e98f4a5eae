/**
 * Attacks `startModelTurn` (server-only `ModelMessage` loops) with what a Node service does:
 *
 * - binary data as Node `Buffer`s and `ArrayBuffer`s (the SDK's `DataContent`), which the README promises
 *   to store as base64 (`JSON.stringify` had turned a `Buffer` into `{ type: 'Buffer', data }` and an
 *   `ArrayBuffer` into `{}` before the replacer saw them: `INVALID_MESSAGE`);
 * - a turn id reused with other input: the stored input was sent instead and the new one silently
 *   dropped (domain rule 3: a conflict, reported);
 * - one turn's callbacks given to a second model call after the first failed mid-turn: the second call's
 *   first messages were skipped by position (`messages[replies.length:]`, the position-cursor incident);
 * - `streamText` with the same callbacks, as the README says.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, newSessionId, toolPairing } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { generateText, modelMessageSchema, stepCountIs, streamText, tool, type ModelMessage } from 'ai'
import { z } from 'zod'
import { MockLanguageModelV3 } from 'ai/test'
import { startModelTurn } from '@turnlog/ai-sdk'
import { STORE_KINDS, useTestStoreOfKind } from './store-kinds.js'
import { scriptedModel, textStep, toolStep, tools } from './chat-fixture.js'

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]
const usage = {
  inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 1, text: 1, reasoning: undefined },
}
const PNG_BASE64 = Buffer.from(PNG).toString('base64')

describe.each(STORE_KINDS)('startModelTurn with demanding input on %s', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it.each([
    ['a Uint8Array', () => new Uint8Array(PNG)],
    ['a Node Buffer (fs.readFile)', () => Buffer.from(PNG)],
    ['an ArrayBuffer', () => new Uint8Array(PNG).buffer],
  ])('stores an image given as %s as base64, and sends it back as such', async (_name, data) => {
    // given
    const session = newSessionId()
    const question = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', image: data(), mediaType: 'image/png' },
        { type: 'file', data: data(), mediaType: 'image/png' },
      ],
    } as ModelMessage
    // when
    const turn = await startModelTurn(store, session, [question])
    // then
    const expected = {
      role: 'user',
      content: [
        { type: 'text', text: 'What is this?' },
        { type: 'image', image: PNG_BASE64, mediaType: 'image/png' },
        { type: 'file', data: PNG_BASE64, mediaType: 'image/png' },
      ],
    }
    expect((await store.load(session)).messages.map((m) => m.payload)).toEqual([expected])
    expect(turn.messages).toEqual([expected])
    expect(modelMessageSchema.safeParse(turn.messages[0]).success).toBe(true)
  })

  it('a turn id reused with other input is a MESSAGE_CONFLICT, not the old input sent silently', async () => {
    // given
    const session = newSessionId()
    await startModelTurn(store, session, [{ role: 'user', content: 'first question' }], { turnId: 'req-1' })
    // when
    const error = await startModelTurn(store, session, [{ role: 'user', content: 'another question' }], { turnId: 'req-1' }).then(
      () => undefined,
      (e: unknown) => e,
    )
    // then
    expect(isTurnlogError(error, 'MESSAGE_CONFLICT')).toBe(true)
    expect((await store.load(session)).messages.map((m) => m.payload)).toEqual([{ role: 'user', content: 'first question' }])
  })

  it('a retried turn whose input is stored but no longer the end of the history sends the history once', async () => {
    // given: the first attempt stored its input and a reply
    const session = newSessionId()
    const q = { role: 'user', content: 'hi' } as ModelMessage
    const first = await startModelTurn(store, session, [q], { turnId: 'req-2' })
    const model = new MockLanguageModelV3({
      doGenerate: async () => ({
        content: [{ type: 'text', text: 'Hello.' }],
        finishReason: { unified: 'stop', raw: 'stop' },
        usage: {
          inputTokens: { total: 1, noCache: 1, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 1, text: 1, reasoning: undefined },
        },
        warnings: [],
      }),
    })
    const result = await generateText({ model, messages: first.messages, onFinish: first.onFinish })
    // when
    const retry = await startModelTurn(store, session, [q], { turnId: 'req-2' })
    // then
    expect(retry.messages).toEqual([q, ...JSON.parse(JSON.stringify(result.response.messages))])
    expect((await store.load(session)).messages).toHaveLength(2)
  })

  it('one turn whose model call failed after a step, called again: every message of the second call is stored too', async () => {
    // given: the first call stores its tool-call step, then the provider fails (a 429 on the second step)
    const session = newSessionId()
    const turn = await startModelTurn(store, session, [{ role: 'user', content: 'Weather in Paris?' }])
    let call = 0
    const model = new MockLanguageModelV3({
      doGenerate: async () => {
        call++
        if (call === 2) throw new Error('429 Too Many Requests')
        const id = `c${call}`
        return call === 1 || call === 3
          ? {
              content: [{ type: 'tool-call', toolCallId: id, toolName: 'weather', input: '{"city":"Paris"}' }],
              finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
              usage,
              warnings: [],
            }
          : { content: [{ type: 'text', text: 'Sunny.' }], finishReason: { unified: 'stop', raw: 'stop' }, usage, warnings: [] }
      },
    })
    const options = {
      model,
      tools: { weather: tool({ inputSchema: z.object({ city: z.string() }), execute: async () => 'sunny' }) },
      messages: turn.messages,
      stopWhen: stepCountIs(5),
      maxRetries: 0,
      onStepFinish: turn.onStepFinish,
      onFinish: turn.onFinish,
    }
    await expect(generateText(options)).rejects.toThrow('429')
    // when: the app retries the call with the same turn
    const second = await generateText(options)
    // then: nothing of either call is lost; the second call's messages follow the first call's
    const stored = (await store.load(session)).messages.map((m) => m.payload as ModelMessage)
    const secondMessages = JSON.parse(JSON.stringify(second.response.messages)) as ModelMessage[]
    expect(stored.slice(-secondMessages.length)).toEqual(secondMessages)
    expect(stored).toHaveLength(1 + 2 + secondMessages.length)
    expect(toolPairing(stored.map((payload) => createMessage(payload, { format: 'ai-sdk-model' }))).unanswered).toEqual([])
  })

  it('streamText takes the same callbacks: a two-step streamed turn stores each step once, in order', async () => {
    // given
    const session = newSessionId()
    const turn = await startModelTurn(store, session, [{ role: 'user', content: 'Weather in Paris?' }])
    const seen: number[] = []
    // when
    const result = streamText({
      model: scriptedModel([toolStep('s1', 'weather', { city: 'Paris' }), textStep('Sunny.')]),
      tools,
      messages: turn.messages,
      stopWhen: stepCountIs(5),
      onStepFinish: async (step) => {
        await turn.onStepFinish(step)
        seen.push((await store.load(session)).messages.length)
      },
      onFinish: turn.onFinish,
    })
    await result.consumeStream()
    const response = await result.response
    // then
    expect(seen).toEqual([3, 4])
    expect((await store.load(session)).messages.map((m) => m.payload)).toEqual(
      JSON.parse(JSON.stringify([{ role: 'user', content: 'Weather in Paris?' }, ...response.messages])),
    )
  })
})
