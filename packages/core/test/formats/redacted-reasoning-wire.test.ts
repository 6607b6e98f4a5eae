/**
 * Regression (adversarial review): a redacted `openai-responses` reasoning item keeps its shape with
 * `encrypted_content: '[redacted]'` and its summary texts `'[redacted]'`, and `toWire` sent it: OpenAI
 * decrypts a reasoning item's encrypted content and refuses the request when it cannot
 * (`invalid_encrypted_content`), so every later request of the session failed; a redacted `compaction`
 * item the same. The wire copy now leaves such an item out. The Responses API ties an output item it
 * made (`msg_…`, `fc_…`) to the reasoning item of its response and refuses it without that item
 * ("Item 'fc_…' of type 'function_call' was provided without its required 'reasoning' item"), so the
 * items that followed a left-out reasoning item in its response (assistant messages, function and
 * custom tool calls) are sent without their own `id` (their `call_id` still pairs their outputs).
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, redactedPayload, toWire, type Message, type OpenAIResponsesItem } from '@turnlog/core'

function item(payload: OpenAIResponsesItem): Message<OpenAIResponsesItem> {
  return createMessage(payload, { format: 'openai-responses' })
}

/** The item as `load` shows it after `store.redact`: its placeholder, same format. */
function redacted(m: Message<OpenAIResponsesItem>): Message<OpenAIResponsesItem> {
  return item(redactedPayload(m.payload, 'openai-responses') as OpenAIResponsesItem)
}

const question = item({ role: 'user', content: 'My card is 4111 1111 1111 1111; what is the weather in Paris?' })
const reasoning = item({
  type: 'reasoning',
  id: 'rs_0a03856801',
  summary: [{ type: 'summary_text', text: 'The user shared a card number; ignore it.' }],
  encrypted_content: 'gAAAAABpF3k9ZmFrZS1lbmNyeXB0ZWQ=',
})
const call = item({
  type: 'function_call',
  id: 'fc_0a03856802',
  call_id: 'call_1',
  name: 'weather',
  arguments: '{"city":"Paris"}',
  status: 'completed',
})
const output = item({ type: 'function_call_output', call_id: 'call_1', output: '18°C' })
const reasoning2 = item({ type: 'reasoning', id: 'rs_0b1', summary: [], encrypted_content: 'gAAAAABpF3k9c2Vjb25k' })
const answer = item({
  type: 'message',
  id: 'msg_0b2',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'It is 18°C.', annotations: [] }],
})
const next = item({ role: 'user', content: 'Thanks.' })

describe('openai-responses: a redacted reasoning item is left out of the wire copy', () => {
  it('leaves out the reasoning placeholder and sends the items of its response without their ids', () => {
    // given
    const list = [question, redacted(reasoning), call, output, reasoning2, answer, next]

    // when
    const wire = toWire(list)
    const repaired = toWire(list, { repairPairing: true })

    // then: no placeholder reasoning; the call of that response without its id; the next response as stored
    const { id: _callId, ...callWithoutId } = call.payload
    expect(wire).toEqual([question.payload, callWithoutId, output.payload, reasoning2.payload, answer.payload, next.payload])
    expect(repaired).toEqual(wire)
  })

  it('sends the assistant message of a response whose reasoning was redacted without its id', () => {
    // given
    const list = [question, reasoning2, answer, next].map((m) => (m === reasoning2 ? redacted(m) : m))

    // when
    const wire = toWire(list)

    // then
    const { id: _answerId, ...answerWithoutId } = answer.payload
    expect(wire).toEqual([question.payload, answerWithoutId, next.payload])
  })

  it('leaves out a reasoning placeholder without encrypted content (a summary only, store: true)', () => {
    // given
    const summarized = item({ type: 'reasoning', id: 'rs_9', summary: [{ type: 'summary_text', text: 'Think about the card.' }] })

    // when / then
    expect(toWire([question, redacted(summarized), next])).toEqual([question.payload, next.payload])
  })

  it('answers an unanswered call of a response whose reasoning was redacted', () => {
    // given
    const list = [question, redacted(reasoning), call, next]

    // when
    const wire = toWire(list, { repairPairing: true })

    // then
    const { id: _callId, ...callWithoutId } = call.payload
    expect(wire).toEqual([
      question.payload,
      callWithoutId,
      { type: 'function_call_output', call_id: 'call_1', output: 'Tool call interrupted: no result was recorded.' },
      next.payload,
    ])
  })

  it('leaves out a redacted compaction item', () => {
    // given
    const compaction = item({ type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAABpF3k9Y29tcGFjdGVk' })

    // when / then
    expect(toWire([redacted(compaction), next])).toEqual([next.payload])
  })

  it('sends reasoning and compaction items that were not redacted as stored, ids and all', () => {
    // given
    const compaction = item({ type: 'compaction', id: 'cmp_1', encrypted_content: 'gAAAAABpF3k9Y29tcGFjdGVk' })
    const list = [compaction, question, reasoning, call, output, reasoning2, answer, next]

    // when / then
    expect(toWire(list)).toEqual(list.map((m) => m.payload))
    expect(toWire(list, { repairPairing: true })).toEqual(list.map((m) => m.payload))
  })
})
