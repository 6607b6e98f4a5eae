/**
 * Pins what docs/formats.md ("Types") says about `openai-chat` payloads at the edges of what OpenAI
 * accepts: `tool_calls: null` (a Python `model_dump()` of a message without calls) is refused at
 * `tool_calls`; the wire copy, also with `repairPairing`, sends a payload as stored apart from what
 * pairing needs (an empty `tool_calls` list, an assistant message with neither content nor calls,
 * `call_id` keys and provider extras are not rewritten), so a caller knows to clean them before storing.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, toWire, type ChatMessage } from '@turnlog/core'

describe('openai-chat payloads at the edges of the provider', () => {
  it('refuses tool_calls: null with INVALID_MESSAGE at tool_calls', () => {
    // given
    const dumped = { role: 'assistant', content: 'hi', refusal: null, function_call: null, tool_calls: null }

    // when
    let error: unknown
    try {
      createMessage(dumped as unknown as ChatMessage)
    } catch (e) {
      error = e
    }

    // then
    expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
    expect((error as { details: { issues: { path: string[] }[] } }).details.issues[0]?.path).toEqual(['tool_calls'])
  })

  it('sends what pairing does not need as stored, with repairPairing too', () => {
    // given
    const payloads: ChatMessage[] = [
      { role: 'assistant', content: 'hi', tool_calls: [] },
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
