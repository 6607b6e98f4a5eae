/**
 * The nulls OpenAI-compatible servers write on a chat reply (vLLM, LiteLLM, Ollama, a Python
 * `model_dump()`: `tool_calls: null`, `refusal: null`, `function_call: null`, `audio: null`) were
 * refused by createMessage (adversarial review). Now accepted: the store keeps the payload exactly
 * as given (key order and nulls), under the content hash of that text, and the wire copy of the loaded
 * message leaves out only `tool_calls: null` (docs/formats.md, "Types").
 */
import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, toWire, type ChatMessage } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'

let store: PostgresStore

useTestStore((t) => ({ store } = t))

describe('an OpenAI-compatible reply with provider nulls', () => {
  it('round-trips through append and load exactly, and is sent without tool_calls: null', async () => {
    // given
    const dumped = { role: 'assistant', content: 'hi', refusal: null, function_call: null, audio: null, tool_calls: null }
    const reply = createMessage(dumped as unknown as ChatMessage)
    const session = await store.createSession()

    // when
    await store.append(session, [createMessage({ role: 'user', content: 'hello' }), reply])
    const again = await store.append(session, [reply])
    const { messages } = await store.load(session)
    const loaded = messages[1]!

    // then: the same text, the same hash, a retry a duplicate; the wire without the null list
    expect(JSON.stringify(loaded.payload)).toBe(JSON.stringify(dumped))
    expect(contentHash(loaded)).toBe(contentHash(reply))
    expect(again.appended).toEqual([])
    expect(toWire([loaded])).toEqual([{ role: 'assistant', content: 'hi', refusal: null, function_call: null, audio: null }])
  })
})
