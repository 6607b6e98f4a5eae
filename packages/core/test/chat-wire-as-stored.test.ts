/**
 * Pins what docs/formats.md ("Types") says about `openai-chat` payloads at the edges of what OpenAI
 * accepts. The nulls OpenAI-compatible servers write on a plain reply (vLLM, LiteLLM, Ollama, a Python
 * `model_dump()`: `tool_calls: null`, `function_call: null`, `refusal: null`, `audio: null`, `content:
 * null` beside calls) are accepted and stored as given: the payload, its content hash and a serialized
 * copy keep them. The wire copy leaves out `tool_calls: null` (the one the `openai` SDK's request type
 * has no place for: an array or absent) and an empty `tool_calls: []` (vLLM's plain reply; OpenAI
 * refuses it with HTTP 400 `empty_array`, openai/openai-python#2061), and sends the other nulls as
 * stored. Apart from that the wire copy, also with `repairPairing`, sends a payload as stored bar what
 * pairing needs (an assistant message with neither content nor calls, `call_id` keys and provider
 * extras are not rewritten), so a caller knows to clean them before storing.
 */
import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, parseMessage, serializeMessage, toWire, type ChatMessage } from '@turnlog/core'
import { sha256 } from './support/independent-hashes.js'

describe('openai-chat payloads at the edges of the provider', () => {
  it('stores an assistant reply with tool_calls: null and the other provider nulls as given, and sends it without tool_calls', () => {
    // given: what vLLM / LiteLLM / a Python model_dump() write for a plain reply
    const dumped = { role: 'assistant', content: 'hi', refusal: null, function_call: null, audio: null, tool_calls: null }

    // when
    const m = createMessage(dumped as unknown as ChatMessage)
    const back = parseMessage(serializeMessage(m))
    const [wire] = toWire([m])
    const [repaired] = toWire([m], { repairPairing: true })

    // then: nothing lost in the store, the hash is that of the text as given
    expect(m.payload).toEqual(dumped)
    expect(Object.keys(m.payload)).toEqual(Object.keys(dumped))
    expect(back.payload).toEqual(dumped)
    expect(contentHash(back)).toBe(contentHash(m))
    expect(contentHash(m)).toBe(
      sha256('{"audio":null,"content":"hi","function_call":null,"refusal":null,"role":"assistant","tool_calls":null}'),
    )
    // and the wire copy is one the SDK's request type and every server takes: no tool_calls key
    const expected = { role: 'assistant', content: 'hi', refusal: null, function_call: null, audio: null }
    expect(wire).toEqual(expected)
    expect(Object.keys(wire as object)).toEqual(Object.keys(expected))
    expect(repaired).toEqual(expected)
  })

  it('stores an assistant reply with tool_calls: [] as given, and sends it without tool_calls', () => {
    // given: what vLLM writes for a plain reply (vllm-project/vllm#44104); OpenAI refuses it sent back:
    // 400 "Invalid 'messages[1].tool_calls': empty array" (openai/openai-python#2061)
    const replied = { role: 'assistant', content: 'hi', tool_calls: [], finish_reason: 'stop' }

    // when
    const m = createMessage(replied as unknown as ChatMessage)
    const back = parseMessage(serializeMessage(m))
    const [wire] = toWire([m])
    const [repaired] = toWire([m], { repairPairing: true })

    // then: nothing lost in the store, the hash is that of the text as given
    expect(m.payload).toEqual(replied)
    expect(back.payload).toEqual(replied)
    expect(contentHash(back)).toBe(contentHash(m))
    expect(contentHash(m)).toBe(sha256('{"content":"hi","finish_reason":"stop","role":"assistant","tool_calls":[]}'))
    // and the wire copy has no tool_calls key, with or without the repair
    const expected = { role: 'assistant', content: 'hi', finish_reason: 'stop' }
    expect(wire).toEqual(expected)
    expect(Object.keys(wire as object)).toEqual(Object.keys(expected))
    expect(repaired).toEqual(expected)
    expect(Object.keys(repaired as object)).toEqual(Object.keys(expected))
    // and the stored payload is untouched by the wire copy
    expect(m.payload).toEqual(replied)
  })

  it('accepts content: null beside calls with the other nulls, and pairs the calls', () => {
    // given
    const calling = {
      role: 'assistant',
      content: null,
      refusal: null,
      function_call: null,
      audio: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    }

    // when
    const wire = toWire([createMessage(calling as unknown as ChatMessage)], { repairPairing: true })

    // then: sent as stored, the unanswered call answered
    expect(wire).toEqual([calling, { role: 'tool', tool_call_id: 'call_1', content: 'Tool call interrupted: no result was recorded.' }])
  })

  it('still refuses a tool_calls that is neither a list nor null', () => {
    expect(() => createMessage({ role: 'assistant', content: 'hi', tool_calls: 'none' } as unknown as ChatMessage)).toThrow(
      expect.objectContaining({ code: 'INVALID_MESSAGE' }),
    )
  })

  it('sends what pairing does not need as stored, with repairPairing too', () => {
    // given
    const payloads: ChatMessage[] = [
      { role: 'assistant', content: null },
      { role: 'assistant', content: null, tool_calls: [{ call_id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', call_id: 'c1', content: 'r' },
      { role: 'assistant', content: 'done', reasoning_content: 'why', finish_reason: 'stop' },
    ]

    // when
    const wire = toWire(
      payloads.map((p) => createMessage(p)),
      { repairPairing: true },
    )

    // then
    expect(wire).toEqual(payloads)
  })
})
