/**
 * OpenAI's Responses API refuses an input list holding one item `id` twice (HTTP 400 "Duplicate item
 * found with id …. Remove duplicate items from your input and try again."). A live list holds one
 * twice when a transcript is re-inserted (a session imported again, a history sent again: the same
 * `rs_…`, `fc_…`, `msg_…` items as new messages with other turnlog ids), or when a compaction carries
 * a covered item again. `toWire` sent them as they were: every request of the session failed. The wire
 * copy now sends each item id once (docs/formats.md, "Each item id once"): a later item of a kind whose
 * input `id` is optional goes without it (its content kept whole); a repeated reasoning item is left out
 * (the API reads it by its id, which its input type requires, and the first one is sent); an item
 * reference to an item already sent is left out; a hosted call repeated byte for byte is left out. The API ties a response's output items to its reasoning item by id ("Item 'fc_…' of type
 * 'function_call' was provided without its required 'reasoning' item"), so the items that follow a
 * reasoning item not sent under its id go without their own ids too. The same holds for `openai-agents`
 * items (the SDK sends them to the Responses API).
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, serializeMessage, toWire, toolPairing, type Message, type MessageId, type OpenAIResponsesItem } from '@turnlog/core'

type Item = Record<string, unknown>

/** A fresh copy of a payload, as a re-import parses it. */
const jsonCopy = (payload: unknown): object => JSON.parse(JSON.stringify(payload)) as object

function item(payload: object): Message<OpenAIResponsesItem> {
  return createMessage(payload as OpenAIResponsesItem, { format: 'openai-responses' })
}

/** The same item as a new message (another turnlog id): what a re-import or a history sent again makes. */
function again(m: Message<unknown>): Message<OpenAIResponsesItem> {
  return item(jsonCopy(m.payload))
}

function withoutId(payload: unknown): Item {
  const { id: _id, ...rest } = payload as Item
  return rest
}

/** The item ids of a wire copy, in order (an id twice is what OpenAI refuses). */
function itemIds(wire: readonly unknown[]): string[] {
  return wire.flatMap((w) => {
    const id = (w as Item)['id']
    return typeof id === 'string' ? [id] : []
  })
}

const question = item({ role: 'user', content: 'Weather in Paris?' })
const reasoning = item({
  type: 'reasoning',
  id: 'rs_0a1',
  summary: [{ type: 'summary_text', text: 'Call the weather tool.' }],
  encrypted_content: 'gAAAAABpF3k9ZmFrZQ==',
})
const call = item({
  type: 'function_call',
  id: 'fc_0a2',
  call_id: 'call_1',
  name: 'weather',
  arguments: '{"city":"Paris"}',
  status: 'completed',
})
const output = item({ type: 'function_call_output', call_id: 'call_1', output: '18°C' })
const answer = item({
  type: 'message',
  id: 'msg_0a3',
  role: 'assistant',
  status: 'completed',
  content: [{ type: 'output_text', text: 'It is 18°C.', annotations: [] }],
})
const followUp = item({ role: 'user', content: 'And tomorrow?' })

describe('toWire: each openai-responses item id is sent once (OpenAI: "Duplicate item found with id …")', () => {
  it('a re-inserted transcript: the later reasoning item is left out, the later call and answer go without their ids', () => {
    // given: the transcript, then the same items again as new messages (a session imported twice)
    const list = [question, reasoning, call, output, answer, followUp, again(reasoning), again(call), again(output), again(answer)]

    // when
    const wire = toWire(list)

    // then: the first copies as stored; the later call and answer without their ids, their output as stored
    expect(wire).toEqual([
      question.payload,
      reasoning.payload,
      call.payload,
      output.payload,
      answer.payload,
      followUp.payload,
      withoutId(call.payload),
      output.payload,
      withoutId(answer.payload),
    ])
    expect(itemIds(wire)).toEqual(['rs_0a1', 'fc_0a2', 'msg_0a3'])
  })

  it('with repairPairing: the reused call id is renamed as before and each item id is still sent once', () => {
    // given
    const list = [question, reasoning, call, output, answer, followUp, again(reasoning), again(call), again(output), again(answer)]

    // when
    const wire = toWire(list, { repairPairing: true }) as Item[]

    // then: the repeated reasoning item left out, nothing else
    expect(wire).toHaveLength(list.length - 1)
    expect(wire[6]).toEqual({ ...withoutId(call.payload), call_id: 'call_1_2' })
    expect(wire[7]).toEqual({ ...output.payload, call_id: 'call_1_2' })
    expect(new Set(itemIds(wire)).size).toBe(itemIds(wire).length)
    const pairing = toolPairing(wire.map((payload, i) => ({ id: `w${i}` as MessageId, payload, format: 'openai-responses' })))
    expect(pairing.ok).toBe(true)
  })

  it('a repeated reasoning item is left out, and the items of its response after it go without their ids', () => {
    // given: store: true, reasoning read by its id; the second response's answer is new (msg_0b1), tied to rs_0a9
    const stored = item({ type: 'reasoning', id: 'rs_0a9', summary: [] })
    const newAnswer = item({ type: 'message', id: 'msg_0b1', role: 'assistant', content: [{ type: 'output_text', text: 'Sunny.' }] })
    const list = [question, stored, answer, followUp, again(stored), newAnswer]

    // when
    const wire = toWire(list)

    // then
    expect(wire).toEqual([question.payload, stored.payload, answer.payload, followUp.payload, withoutId(newAnswer.payload)])
  })

  it('the items after a repeated reasoning item keep their ids once an input ends its response', () => {
    // given
    const stored = item({ type: 'reasoning', id: 'rs_0a9', summary: [] })
    const later = item({ type: 'message', id: 'msg_0c1', role: 'assistant', content: [{ type: 'output_text', text: 'Done.' }] })
    const list = [stored, answer, followUp, again(stored), output, later]

    // when
    const wire = toWire(list)

    // then: the function_call_output is an input: `later` is not of the left-out reasoning's response
    expect(wire).toEqual([stored.payload, answer.payload, followUp.payload, output.payload, later.payload])
  })

  it('a call after a repeat of the reasoning item already heading its response keeps its id (the same reasoning heads it when sent)', () => {
    // given
    const second = item({ type: 'function_call', id: 'fc_0a4', call_id: 'call_2', name: 'weather', arguments: '{}' })
    const list = [question, reasoning, call, again(reasoning), second]

    // when / then
    expect(toWire(list)).toEqual([question.payload, reasoning.payload, call.payload, second.payload])
  })

  it('a left-out reference no longer ends a response: the call after it, headed by no reasoning in the list, goes without its id', () => {
    // given: the reference (an input item) ended the reasoning's response; left out, the call would join it
    const list = [reasoning, item({ type: 'item_reference', id: 'rs_0a1' }), call]

    // when / then
    expect(toWire(list)).toEqual([reasoning.payload, withoutId(call.payload)])
  })

  it('an item reference to an item already sent is left out; an item sent after a reference to it goes without its id', () => {
    // given
    const ref = (id: string) => item({ type: 'item_reference', id })
    const list = [ref('msg_0a3'), answer, question, call, ref('fc_0a2'), ref('rs_0a1'), ref('rs_0a1')]

    // when
    const wire = toWire(list)

    // then
    expect(wire).toEqual([ref('msg_0a3').payload, withoutId(answer.payload), question.payload, call.payload, ref('rs_0a1').payload])
  })

  it('a hosted call repeated byte for byte is left out; under its id with other content it is sent as stored', () => {
    // given: a web search call's id is required: it cannot go without it
    const search = (status: string) => item({ type: 'web_search_call', id: 'ws_0a1', status, action: { type: 'search', query: 'paris' } })
    const list = [question, search('completed'), answer, followUp, search('completed')]
    const conflicting = [question, search('completed'), followUp, search('failed')]

    // when
    const wire = toWire(list)
    const sentAsStored = toWire(conflicting)

    // then: the repeat is left out; a conflicting content is not dropped (the API refuses it: the one case left to the caller)
    expect(wire).toEqual([question.payload, search('completed').payload, answer.payload, followUp.payload])
    expect(sentAsStored).toEqual(conflicting.map((m) => m.payload))
  })

  it('a hosted call after a reference to it is left out (the reference names that item)', () => {
    // given
    const search = item({ type: 'web_search_call', id: 'ws_0a1', status: 'completed' })
    const list = [item({ type: 'item_reference', id: 'ws_0a1' }), search]

    // when / then
    expect(toWire(list)).toEqual([{ type: 'item_reference', id: 'ws_0a1' }])
  })

  it('a call whose id the API requires and that opens a call (computer_call) is sent as stored', () => {
    // given: it may not be left out (it opens a call) nor go without its id
    const computer = (callId: string) =>
      item({
        type: 'computer_call',
        id: 'cu_0a1',
        call_id: callId,
        status: 'completed',
        pending_safety_checks: [],
        action: { type: 'screenshot' },
      })
    const list = [computer('call_1'), computer('call_2')]

    // when / then
    expect(toWire(list)).toEqual(list.map((m) => m.payload))
  })

  it('an id counts as sent only when an item goes with it: the id of a left-out redacted reasoning item is sent later', () => {
    // given: the first copy's reasoning redacted (left out, its call sent without its id), then the original again
    const placeholder = item({
      type: 'reasoning',
      id: 'rs_0a1',
      summary: [{ type: 'summary_text', text: '[redacted]' }],
      encrypted_content: '[redacted]',
    })
    const list = [question, placeholder, call, output, followUp, again(reasoning), again(call)]

    // when
    const wire = toWire(list)

    // then
    expect(wire).toEqual([question.payload, withoutId(call.payload), output.payload, followUp.payload, reasoning.payload, call.payload])
  })

  it('input messages and outputs under one id go without it; the stored messages are untouched', () => {
    // given
    const typed = item({ type: 'message', id: 'msg_u1', role: 'user', content: [{ type: 'input_text', text: 'hi' }] })
    const out = item({ type: 'function_call_output', id: 'fco_1', call_id: 'call_1', output: 'x' })
    const list = [typed, call, out, again(typed), again(out)]
    const before = list.map((m) => serializeMessage(m))

    // when
    const wire = toWire(list)

    // then
    expect(wire).toEqual([typed.payload, call.payload, out.payload, withoutId(typed.payload), withoutId(out.payload)])
    expect(list.map((m) => serializeMessage(m))).toEqual(before)
  })
})

describe('toWire: each openai-agents item id is sent once (the SDK sends the items to the Responses API)', () => {
  const agent = (payload: object): Message<unknown> => createMessage<object>(payload, { format: 'openai-agents' }) as Message<unknown>
  const thought = agent({
    type: 'reasoning',
    id: 'rs_0d1',
    content: [{ type: 'input_text', text: 'Call the tool.' }],
    providerData: { encrypted_content: 'gAAAAABpZmFrZQ==' },
  })
  const agentCall = agent({ type: 'function_call', id: 'fc_0d2', callId: 'call_1', name: 'weather', arguments: '{}' })
  const agentResult = agent({ type: 'function_call_result', callId: 'call_1', name: 'weather', status: 'completed', output: '18°C' })
  const agentAnswer = agent({
    type: 'message',
    id: 'msg_0d3',
    role: 'assistant',
    status: 'completed',
    content: [{ type: 'output_text', text: 'Hi' }],
  })
  const hosted = agent({ type: 'hosted_tool_call', id: 'ws_0d4', name: 'web_search_call', status: 'completed' })
  const user = agent({ role: 'user', content: 'again' })

  it('a re-inserted transcript: later copies go without their ids; the repeated reasoning item and hosted call are left out', () => {
    // given
    const first = [thought, agentCall, agentResult, agentAnswer, hosted]
    const list = [...first, user, ...first.map((m) => agent(jsonCopy(m.payload)))]

    // when
    const wire = toWire(list)

    // then
    expect(wire).toEqual([
      ...first.map((m) => m.payload),
      user.payload,
      withoutId(agentCall.payload),
      agentResult.payload,
      withoutId(agentAnswer.payload),
    ])
  })

  it('a repeated reasoning item is left out; the new call after it goes without its id', () => {
    // given: a new call (fc_0d9) after the repeated reasoning item
    const newCall = agent({ type: 'function_call', id: 'fc_0d9', callId: 'call_9', name: 'weather', arguments: '{}' })
    const list = [thought, agentAnswer, user, agent(jsonCopy(thought.payload)), newCall]

    // when
    const wire = toWire(list)

    // then
    expect(wire).toEqual([thought.payload, agentAnswer.payload, user.payload, withoutId(newCall.payload)])
  })
})

describe('toWire: anthropic tool_use ids (the same class of bug) are sent once by repairPairing', () => {
  it('a re-inserted transcript: the later tool_use and its result are renamed', () => {
    // given
    const m = (payload: object) => createMessage<object>(payload, { format: 'anthropic' }) as Message<unknown>
    const use = m({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_01', name: 'weather', input: {} }] })
    const result = m({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: '18°C' }] })
    const list = [use, result, m({ role: 'assistant', content: 'ok' }), m(jsonCopy(use.payload)), m(jsonCopy(result.payload))]

    // when
    const wire = toWire(list, { repairPairing: true }) as { content: Item[] }[]

    // then
    const ids = wire.flatMap((w) => (Array.isArray(w.content) ? w.content.flatMap((b) => (b['type'] === 'tool_use' ? [b['id']] : [])) : []))
    expect(ids).toEqual(['toolu_01', 'toolu_01_2'])
    expect(wire[4]?.content[0]).toMatchObject({ tool_use_id: 'toolu_01_2' })
  })
})

// ---------------------------------------------------------------------------------------------------
// Property: lists drawn from small pools of item ids, so ids repeat across kinds and copies.

const POOL_RS = ['rs_1', 'rs_2'] as const
const POOL_FC = ['fc_1', 'fc_2'] as const
const POOL_MSG = ['msg_1', 'msg_2'] as const
const CALL_IDS = ['call_a', 'call_b'] as const

/** Items of every rule but `as-is` (those keep their repeated id by design). */
const itemArb: fc.Arbitrary<Item> = fc.oneof(
  fc.tuple(fc.constantFrom(...POOL_RS), fc.boolean(), fc.constantFrom('a', 'b')).map(([id, encrypted, text]) => ({
    type: 'reasoning',
    id,
    summary: [{ type: 'summary_text', text }],
    ...(encrypted ? { encrypted_content: `enc-${id}-${text}` } : {}),
  })),
  fc.tuple(fc.constantFrom(...POOL_FC), fc.constantFrom(...CALL_IDS)).map(([id, callId]) => ({
    type: 'function_call',
    id,
    call_id: callId,
    name: 'f',
    arguments: '{}',
  })),
  fc.tuple(fc.option(fc.constant('fco_1'), { nil: undefined }), fc.constantFrom(...CALL_IDS)).map(([id, callId]) => ({
    type: 'function_call_output',
    ...(id === undefined ? {} : { id }),
    call_id: callId,
    output: 'r',
  })),
  fc.tuple(fc.constantFrom(...POOL_MSG), fc.constantFrom('assistant', 'user')).map(([id, role]) => ({
    type: 'message',
    id,
    role,
    content: [{ type: role === 'user' ? 'input_text' : 'output_text', text: 'x' }],
  })),
  fc.constant({ role: 'user', content: 'plain' }),
  fc.constantFrom(...POOL_RS, ...POOL_FC, ...POOL_MSG, 'ws_1').map((id) => ({ type: 'item_reference', id })),
  // one content only: a hosted call repeated with another content is sent as stored (`as-is`)
  fc.constant({ type: 'web_search_call', id: 'ws_1', status: 'completed' }),
)

/** What an item carries besides its id, with a tag naming its place in the list (kept verbatim: an unknown field). */
const tagged = (items: readonly Item[]): Item[] => items.map((it, i) => (it['type'] === 'web_search_call' ? it : { ...it, x_tag: i }))

function isTied(it: Item): boolean {
  return (it['type'] === 'message' && it['role'] === 'assistant') || it['type'] === 'function_call'
}
function endsResponse(it: Item): boolean {
  const type = it['type']
  return (
    type === 'item_reference' ||
    type === 'function_call_output' ||
    ((type === undefined || type === 'message') && it['role'] !== 'assistant')
  )
}

/** For each tagged tied item that carries an id: the id of the reasoning item governing it in its response (null: none, or none with an id). */
function governing(list: readonly Item[]): Map<number, string | null> {
  const out = new Map<number, string | null>()
  let current: string | null = null
  for (const it of list) {
    if (it['type'] === 'reasoning') current = typeof it['id'] === 'string' ? it['id'] : null
    else if (endsResponse(it)) current = null
    else if (isTied(it) && typeof it['id'] === 'string' && typeof it['x_tag'] === 'number') out.set(it['x_tag'], current)
  }
  return out
}

describe('toWire: each Responses item id once (property)', () => {
  it.each([false, true])(
    'ids sent once; idempotent; no call or result lost; nothing lost but repeats; a tied item keeps its id only beside its own reasoning (repairPairing: %s)',
    (repairPairing) => {
      fc.assert(
        fc.property(fc.array(itemArb, { maxLength: 10 }), (raw) => {
          // given
          const payloads = tagged(raw)
          const list = payloads.map((p) => item(p))
          const before = list.map((m) => serializeMessage(m))

          // when
          const wire = toWire(list, { repairPairing }) as Item[]

          // then: every item id once
          const ids = itemIds(wire)
          expect(new Set(ids).size).toBe(ids.length)
          // then: idempotent
          expect(
            toWire(
              wire.map((p) => item(p)),
              { repairPairing },
            ),
          ).toEqual(wire)
          // then: the input is untouched
          expect(list.map((m) => serializeMessage(m))).toEqual(before)
          if (repairPairing) {
            const pairing = toolPairing(wire.map((payload, i) => ({ id: `w${i}` as MessageId, payload, format: 'openai-responses' })))
            expect(pairing.ok).toBe(true)
            return
          }
          // then (no repair): a tied item sent with its id follows, in its response, the reasoning item it followed in the list
          const was = governing(payloads)
          for (const [tag, reasoningId] of governing(wire)) expect(reasoningId).toBe(was.get(tag))
          // then (no repair): items kept in order, each once; calls and outputs all kept
          const tags = wire.flatMap((w) => (typeof w['x_tag'] === 'number' ? [w['x_tag']] : []))
          expect(tags).toEqual([...tags].sort((a, b) => a - b))
          const calls = (ps: readonly Item[]) => ps.filter((p) => p['type'] === 'function_call' || p['type'] === 'function_call_output')
          expect(calls(wire).map(withoutId)).toEqual(calls(payloads).map(withoutId))
          // then (no repair): an item left out is a reasoning item, a reference or a hosted call whose id an earlier item sent
          payloads.forEach((p, i) => {
            const sent = wire.find((w) => w['x_tag'] === i)
            if (sent !== undefined || p['type'] === 'web_search_call') return
            expect(['reasoning', 'item_reference']).toContain(p['type'])
            const at = wire.findIndex((w) => typeof w['x_tag'] === 'number' && w['x_tag'] > i)
            const earlier = at === -1 ? wire : wire.slice(0, at)
            expect(itemIds(earlier)).toContain(p['id'])
          })
          // then (no repair): the hosted call is sent once when the list holds it and no reference to it came first
          const searches = wire.filter((w) => w['type'] === 'web_search_call')
          const firstWs = payloads.find((p) => p['id'] === 'ws_1')
          expect(searches).toHaveLength(firstWs?.['type'] === 'web_search_call' ? 1 : 0)
        }),
        { numRuns: 300 },
      )
    },
  )
})
