/**
 * Regression (adversarial review, docs/security.md "Redaction"): a redacted `anthropic` assistant turn
 * keeps its thinking block as `{ type: 'thinking', thinking: '[redacted]', signature: '[redacted]' }`
 * (and a `redacted_thinking` block as `{ data: '[redacted]' }`), and `toWire` sent it: Anthropic verifies
 * a thinking block's signature and refuses a modified one, so every later request of the session failed.
 * Anthropic allows a thinking block of an earlier assistant turn to be left out ("you can omit thinking
 * and redacted_thinking blocks from prior assistant role turns"); the wire copy now leaves out the
 * placeholder blocks, and a turn left with nothing, and sends everything else as stored (real
 * thinking blocks included), also through the pairing repair.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, redactedPayload, toWire, type AnthropicMessageParam, type Message } from '@turnlog/core'

const SIG = 'EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgxBdjrkzLoky3dl1pkiMOYds'

function anthropic(payload: AnthropicMessageParam): Message<AnthropicMessageParam> {
  return createMessage(payload, { format: 'anthropic' })
}

/** The message as `load` shows it after `store.redact`: its placeholder, same format. */
function redacted(m: Message<AnthropicMessageParam>): Message<AnthropicMessageParam> {
  return anthropic(redactedPayload(m.payload, 'anthropic') as unknown as AnthropicMessageParam)
}

const question = anthropic({ role: 'user', content: 'Weather in Paris? My card is 4111 1111 1111 1111.' })
const calling = anthropic({
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'The user gave a card number; ignore it, call the tool.', signature: SIG },
    { type: 'redacted_thinking', data: 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr' },
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } },
  ],
})
const result = anthropic({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: '18°C' }] })
const answer = anthropic({
  role: 'assistant',
  content: [
    { type: 'thinking', thinking: 'Report it.', signature: `${SIG}2` },
    { type: 'text', text: 'It is 18°C.' },
  ],
})
const next = anthropic({ role: 'user', content: 'Thanks. And tomorrow?' })

describe('anthropic: a redacted thinking block is left out of the wire copy', () => {
  it('sends a redacted earlier turn without its placeholder thinking blocks, everything else as stored', () => {
    // given: the calling turn of a closed tool loop was redacted
    const list = [question, redacted(calling), result, answer, next]

    // when
    const wire = toWire(list)
    const repaired = toWire(list, { repairPairing: true })

    // then: no placeholder thinking block is sent; the turn keeps its text placeholder and its call
    expect(wire[1]).toEqual({
      role: 'assistant',
      content: [
        { type: 'text', text: '[redacted]' },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} },
      ],
    })
    expect(wire.filter((_, i) => i !== 1)).toEqual([question, result, answer, next].map((m) => m.payload))
    expect(repaired).toEqual(wire)
  })

  it('keeps the real thinking blocks of turns that were not redacted', () => {
    // given: the final answer was redacted, the calling turn was not
    const list = [question, calling, result, redacted(answer), next]

    // when
    const wire = toWire(list)

    // then
    expect(wire[1]).toEqual(calling.payload)
    expect(wire[3]).toEqual({ role: 'assistant', content: [{ type: 'text', text: '[redacted]' }] })
  })

  it('leaves out a redacted turn that held nothing but thinking', () => {
    // given: a turn cut off at max_tokens while thinking, then redacted
    const cut = anthropic({ role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm, the card…', signature: SIG }] })
    const list = [question, redacted(cut), next]

    // when / then
    expect(toWire(list)).toEqual([question.payload, next.payload])
    expect(toWire(list, { repairPairing: true })).toEqual([question.payload, next.payload])
  })

  it('repairs an unanswered call of a redacted turn without sending its placeholder thinking', () => {
    // given: the calling turn was redacted and its result was never recorded
    const list = [question, redacted(calling), next]

    // when
    const wire = toWire(list, { repairPairing: true })

    // then
    expect(wire).toEqual([
      question.payload,
      {
        role: 'assistant',
        content: [
          { type: 'text', text: '[redacted]' },
          { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: 'Tool call interrupted: no result was recorded.', is_error: true },
        ],
      },
      next.payload,
    ])
  })

  it('leaves the placeholder out of a copy the repair rewrote (a repeated tool_use dropped)', () => {
    // given: a redacted turn opens again a call that is still open (a duplicate call)
    const again = anthropic({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'weather', input: { city: 'Paris' } }],
    })
    const twice = anthropic({
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'Again.', signature: SIG },
        { type: 'tool_use', id: 'toolu_1', name: 'weather', input: {} },
      ],
    })
    const list = [question, again, redacted(twice), result, next]

    // when
    const wire = toWire(list, { repairPairing: true })

    // then: the repeated call is left out, and with it the whole redacted turn (only its placeholder thinking was left)
    expect(wire).toEqual([question.payload, again.payload, result.payload, next.payload])
  })
})
