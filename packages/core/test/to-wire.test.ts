import { describe, expect, it } from '@jest/globals'
import { INTERRUPTED_TOOL_RESULT, createMessage, serializeMessage, toWire, toolPairing, type MessageId } from '@turnlog/core'
import { assistant, assistantCalling, toolResult, user } from './support/messages.js'

const ENVELOPE_KEYS = ['id', 'createdAt', 'ephemeral', 'externalId', 'status', 'payload']

const synthetic = (id: string, content = INTERRUPTED_TOOL_RESULT) => ({ role: 'tool', tool_call_id: id, content })

describe('toWire', () => {
  it('sends the payloads only: no envelope key, whatever the envelope holds (#104359: "Extra inputs are not permitted")', () => {
    // given
    const list = [
      createMessage({ role: 'user', content: 'hi' }, { externalId: 'telegram:1:2', scope: null, createdAt: '2026-01-01T00:00:00Z' }),
      createMessage({ role: 'assistant', content: 'Hel' }, { status: 'partial' }),
      createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true }),
    ]

    // when
    const wire = toWire(list)

    // then
    expect(wire).toEqual(list.map((m) => m.payload))
    for (const w of wire) for (const key of ENVELOPE_KEYS) expect(Object.keys(w)).not.toContain(key)
    for (const m of list) expect(JSON.stringify(wire)).not.toContain(m.id)
  })

  it("keeps a payload's own `id` or `status` field (they belong to the provider, not to turnlog)", () => {
    // given
    const m = createMessage({ role: 'assistant', content: 'x', id: 'msg_provider_1', status: 'completed' })

    // when
    const [wire] = toWire([m])

    // then
    expect(wire).toEqual({ role: 'assistant', content: 'x', id: 'msg_provider_1', status: 'completed' })
  })

  it('keeps the order and includes ephemeral messages (sent, never stored)', () => {
    // given
    const list = [user('a'), assistant('b'), user('(empty)', { ephemeral: true }), user('c')]

    // when
    const wire = toWire(list)

    // then
    expect(wire.map((w) => w.content)).toEqual(['a', 'b', '(empty)', 'c'])
  })

  it('returns deep, mutable copies: editing them changes no message', () => {
    // given
    const m = createMessage({ role: 'user', content: [{ type: 'text', text: 'original' }], meta: { tags: ['a'] } })
    const before = serializeMessage(m)

    // when
    const [wire] = toWire([m])
    const parts = wire?.content as { type: string; text: string }[]
    ;(parts[0] as { text: string }).text = 'edited'
    parts.push({ type: 'text', text: 'added' })
    ;(wire?.['meta'] as { tags: string[] }).tags.push('b')
    if (wire) wire.role = 'system'

    // then
    expect(serializeMessage(m)).toBe(before)
    expect(Object.isFrozen(wire)).toBe(false)
    expect(wire).not.toBe(m.payload)
    expect(toWire([m])).toEqual([m.payload])
  })

  it('leaves an unpaired list as it is unless repairPairing is asked for', () => {
    // given
    const list = [toolResult('orphan'), assistantCalling(['call_1'])]

    // when / then
    expect(toWire(list)).toEqual(list.map((m) => m.payload))
  })

  describe('repairPairing', () => {
    it("adds a synthetic result for an unanswered call right after that call's block of results", () => {
      // given
      const call = assistantCalling(['call_1', 'call_2', 'call_3'])
      const list = [user('go'), call, toolResult('call_2'), user('next'), assistant('ok')]

      // when
      const wire = toWire(list, { repairPairing: true })

      // then
      expect(wire).toEqual([
        list[0]?.payload,
        call.payload,
        toolResult('call_2').payload,
        synthetic('call_1'),
        synthetic('call_3'),
        list[3]?.payload,
        list[4]?.payload,
      ])
      expect(toolPairing(wire.map((payload, i) => ({ id: String(i) as never, payload }))).ok).toBe(true)
    })

    it('adds the synthetic result at the very end when the unanswered call is last (crash mid-turn)', () => {
      // given
      const list = [user('go'), assistantCalling(['call_1'], 'call_id')]

      // when
      const wire = toWire(list, { repairPairing: true, interruptedContent: '(interrupted)' })

      // then
      expect(wire).toEqual([list[0]?.payload, list[1]?.payload, synthetic('call_1', '(interrupted)')])
    })

    it('drops orphan results, including a result placed before its call, and answers that call', () => {
      // given
      const early = toolResult('call_1')
      const call = assistantCalling(['call_1'])
      const stray = toolResult('call_zzz')
      const list = [user('go'), early, call, stray, assistant('done')]

      // when
      const wire = toWire(list, { repairPairing: true })

      // then
      expect(wire).toEqual([list[0]?.payload, call.payload, synthetic('call_1'), list[4]?.payload])
    })

    it('keeps the first result for a call id and drops the duplicates', () => {
      // given
      const call = assistantCalling(['call_1'])
      const first = toolResult('call_1', 'first')
      const list = [call, first, toolResult('call_1', 'second'), assistant('done'), toolResult('call_1', 'third')]

      // when
      const wire = toWire(list, { repairPairing: true })

      // then
      expect(wire).toEqual([call.payload, first.payload, list[3]?.payload])
    })

    it('changes nothing on a well-paired list', () => {
      // given
      const list = [user('go'), assistantCalling(['a', 'b']), toolResult('b'), toolResult('a'), assistant('done')]

      // when / then
      expect(toWire(list, { repairPairing: true })).toEqual(toWire(list))
    })

    it('leaves the input messages untouched: the repair is in the wire copy only', () => {
      // given
      const list = [
        toolResult('x'),
        assistantCalling(['call_1']),
        toolResult('call_2'),
        assistantCalling(['call_2']),
        toolResult('call_2'),
        toolResult('call_2'),
      ]
      const before = list.map((m) => serializeMessage(m))
      const pairingBefore = toolPairing(list)
      const copy = [...list]

      // when
      toWire(list, { repairPairing: true })

      // then
      expect(list).toEqual(copy)
      expect(list.map((m) => serializeMessage(m))).toEqual(before)
      expect(toolPairing(list)).toEqual(pairingBefore)
    })
  })

  describe('repairPairing: a call id called twice (OpenAI refuses two tool_calls with one id)', () => {
    it('leaves the second tool_calls entry with one id out of the copy; the one result pairs with the first', () => {
      // given
      const call = assistantCalling(['call_1', 'call_1', 'call_2'])
      const list = [user('read both'), call, toolResult('call_1'), toolResult('call_2')]

      // when
      const wire = toWire(list, { repairPairing: true })

      // then
      const calls = call.payload.tool_calls ?? []
      expect(wire).toEqual([list[0]?.payload, { ...call.payload, tool_calls: [calls[0], calls[2]] }, list[2]?.payload, list[3]?.payload])
      expect(toolPairing(wire.map((payload, i) => ({ id: `wire-${i}` as MessageId, payload }))).ok).toBe(true)
      expect(call.payload).toEqual(assistantCalling(['call_1', 'call_1', 'call_2']).payload)
    })

    it('an unanswered call made twice in one message gets one synthetic result', () => {
      // given
      const call = assistantCalling(['call_1', 'call_1'])

      // when
      const wire = toWire([call], { repairPairing: true })

      // then
      expect(wire).toEqual([{ ...call.payload, tool_calls: [call.payload.tool_calls?.[0]] }, synthetic('call_1')])
    })

    it('a later message that calls the id again before its result loses that call; with nothing else to say it is not sent', () => {
      // given: turn 2 repeats call_1 while turn 1's call is still open; one result answers the first
      const first = assistantCalling(['call_1'])
      const again = assistantCalling(['call_1'])
      const withText = createMessage({ role: 'assistant', content: 'once more', tool_calls: again.payload.tool_calls ?? [] })
      const list = [first, again, toolResult('call_1', 'a'), user('next')]

      // when
      const wire = toWire(list, { repairPairing: true })
      const keepsText = toWire([first, withText, toolResult('call_1', 'a')], { repairPairing: true })

      // then
      expect(wire).toEqual([first.payload, list[2]?.payload, list[3]?.payload])
      expect(keepsText[1]).toEqual({ role: 'assistant', content: 'once more' })
    })

    it('an id called again after its result (a provider that numbers calls per turn) is a new call: both turns are sent, the later one renamed', () => {
      // given: turn 1 calls call_1 and gets its result; turn 2 reuses the id for another call, and turn 3 again, unanswered
      const first = assistantCalling(['call_1'])
      const second = createMessage({
        role: 'assistant',
        content: 'and the other',
        tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'g', arguments: '{"x":2}' } }],
      })
      const third = assistantCalling(['call_1', 'call_1_3'])
      const list = [user('go'), first, toolResult('call_1', 'a'), second, toolResult('call_1', 'b'), third, toolResult('call_1_3', 'c')]

      // when
      const pairing = toolPairing(list)
      const plain = toWire(list)
      const wire = toWire(list, { repairPairing: true, interruptedContent: 'INTERRUPTED' })

      // then: each call pairs with the result after it; the reuse is reported
      expect(pairing.duplicateCalls).toEqual([])
      expect(pairing.duplicates).toEqual([])
      expect(pairing.reusedCalls).toEqual([{ toolCallId: 'call_1', messageIds: [first.id, second.id, third.id] }])
      expect(pairing.unanswered).toEqual([{ messageId: third.id, toolCallId: 'call_1' }])
      expect(pairing.ok).toBe(false)
      // then: without the repair the payloads go as they are
      expect(plain).toEqual(list.map((m) => m.payload))
      // then: with it nothing is lost, every id is sent once (`call_1_3` is taken, so the third call is `call_1_3_`)
      expect(wire).toEqual([
        list[0]?.payload,
        first.payload,
        list[2]?.payload,
        { ...second.payload, tool_calls: [{ id: 'call_1_2', type: 'function', function: { name: 'g', arguments: '{"x":2}' } }] },
        { role: 'tool', tool_call_id: 'call_1_2', content: 'b' },
        { ...third.payload, tool_calls: [{ ...third.payload.tool_calls?.[0], id: 'call_1_3_' }, third.payload.tool_calls?.[1]] },
        list[6]?.payload,
        { role: 'tool', tool_call_id: 'call_1_3_', content: 'INTERRUPTED' },
      ])
      expect(toolPairing(wire.map((payload, i) => ({ id: `wire-${i}` as never, payload }))).ok).toBe(true)
      // then: the log's payloads are untouched
      expect(second.payload.tool_calls?.[0]).toMatchObject({ id: 'call_1' })
    })
  })

  describe('identical copies (issue 13.2: a redelivered message pushed twice)', () => {
    it('are one message: sent once at the first place, one result for the pairing, never dropped by repairPairing', () => {
      // given: a copy of the question and of the tool result (spread and JSON round trip)
      const q = user('q')
      const call = assistantCalling(['call_1'])
      const result = toolResult('call_1', 'out')
      const live = [q, call, result, { ...q }, JSON.parse(JSON.stringify(result)) as typeof result, assistant('done')]

      // when
      const pairing = toolPairing(live)
      const plain = toWire(live)
      const repaired = toWire(live, { repairPairing: true })

      // then: before the fix the copies counted as a second result, and repair dropped both of them
      expect(pairing).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
      const expected = [q, call, result, live[5]].map((m) => m?.payload)
      expect(plain).toEqual(expected)
      expect(repaired).toEqual(expected)
    })

    it('a second content under the same id is not a copy: it is kept (the store refuses it as a conflict)', () => {
      const m = user('one')
      const other = createMessage({ role: 'user', content: 'two' }, { id: m.id })
      expect(toWire([m, other])).toEqual([
        { role: 'user', content: 'one' },
        { role: 'user', content: 'two' },
      ])
    })

    it('compares whole payloads: a payload with a `payload` field of its own and no role is not read as a message', () => {
      // given: two json payloads under one id that differ outside their inner `payload` only
      const m = createMessage({ payload: { step: 1 }, note: 'first' }, { format: 'json' })
      const other = createMessage({ payload: { step: 1 }, note: 'second' }, { format: 'json', id: m.id })

      // when / then: both are sent (before the fix the copy check hashed the inner value and sent one)
      expect(toWire([m, other])).toEqual([
        { payload: { step: 1 }, note: 'first' },
        { payload: { step: 1 }, note: 'second' },
      ])
      expect(toWire([m, other, createMessage({ payload: { step: 1 }, note: 'first' }, { format: 'json', id: m.id })])).toHaveLength(2)
    })
  })

  describe('repairPairing of a list holding two contents under one id (an edit in place next to its old copy)', () => {
    it('an edited tool result next to its old copy: the call gets one result, the first', () => {
      // given
      const call = assistantCalling(['call_1'])
      const result = toolResult('call_1', 'old output')
      const edited = createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'new output' }, { id: result.id })
      const live = [user('q'), call, result, edited]

      // when
      const pairing = toolPairing(live)
      const wire = toWire(live, { repairPairing: true })

      // then: before the fix the repair keyed its drops by id, and sent both results
      expect(pairing.duplicates).toEqual([{ toolCallId: 'call_1', messageIds: [result.id, result.id] }])
      expect(wire).toEqual([live[0], call, result].map((m) => m?.payload))
      expect(toolPairing(wire.map((payload) => createMessage(payload))).ok).toBe(true)
    })

    it('an edited calling message next to its old copy: the call is opened once, with its result after it', () => {
      // given
      const call = assistantCalling(['call_1'])
      const edited = createMessage(
        {
          role: 'assistant',
          content: 'calling again',
          tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }],
        },
        { id: call.id },
      )
      const result = toolResult('call_1', 'out')
      const live = [user('q'), call, edited, result]

      // when
      const wire = toWire(live, { repairPairing: true })

      // then: the first opening is kept, the edit's repeated call left out (its text kept)
      expect(toolPairing(wire.map((payload) => createMessage(payload))).ok).toBe(true)
      expect(wire.filter((p) => p.role === 'assistant' && p.tool_calls !== undefined)).toHaveLength(1)
      expect(wire.at(-1)).toEqual(result.payload)
    })
  })
})
