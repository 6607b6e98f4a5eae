import { describe, expect, it } from '@jest/globals'
import { createMessage, toolCallIds, toolPairing, toolResultId } from '@turnlog/core'
import { assistant, assistantCalling, toolResult, user } from './support/messages.js'

describe('toolPairing', () => {
  it('is ok when every call (by id) has exactly one result after it', () => {
    // given
    const list = [user('read it'), assistantCalling(['call_1', 'call_2']), toolResult('call_2'), toolResult('call_1'), assistant('done')]

    // when
    const pairing = toolPairing(list)

    // then
    expect(pairing).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
  })

  it('pairs the call_id variant on both sides, and mixed with id / tool_call_id', () => {
    // given
    const viaCallId = [assistantCalling(['c1'], 'call_id'), toolResult('c1', 'ok', 'call_id')]
    const mixedA = [assistantCalling(['c1'], 'call_id'), toolResult('c1', 'ok', 'tool_call_id')]
    const mixedB = [assistantCalling(['c1'], 'id'), toolResult('c1', 'ok', 'call_id')]

    // when / then
    expect(toolPairing(viaCallId).ok).toBe(true)
    expect(toolPairing(mixedA).ok).toBe(true)
    expect(toolPairing(mixedB).ok).toBe(true)
  })

  it('reports an unanswered call with its message id (interrupt, crash)', () => {
    // given
    const call = assistantCalling(['call_1', 'call_2'])
    const list = [call, toolResult('call_1')]

    // when
    const pairing = toolPairing(list)

    // then
    expect(pairing.ok).toBe(false)
    expect(pairing.unanswered).toEqual([{ messageId: call.id, toolCallId: 'call_2' }])
    expect(pairing.orphans).toEqual([])
  })

  it('reports a result with no call as an orphan', () => {
    // given
    const orphan = toolResult('call_x')

    // when
    const pairing = toolPairing([user('hi'), orphan])

    // then
    expect(pairing.orphans).toEqual([{ messageId: orphan.id, toolCallId: 'call_x' }])
    expect(pairing.ok).toBe(false)
  })

  it('counts a result placed before its call as an orphan, and the call as unanswered (wall-clock ordering incident)', () => {
    // given
    const result = toolResult('call_1')
    const call = assistantCalling(['call_1'])

    // when
    const pairing = toolPairing([result, call])

    // then
    expect(pairing.orphans).toEqual([{ messageId: result.id, toolCallId: 'call_1' }])
    expect(pairing.unanswered).toEqual([{ messageId: call.id, toolCallId: 'call_1' }])
  })

  it('reports several results for one call id, in order', () => {
    // given
    const first = toolResult('call_1', 'a')
    const second = toolResult('call_1', 'b')

    // when
    const pairing = toolPairing([assistantCalling(['call_1']), first, second])

    // then
    expect(pairing.duplicates).toEqual([{ toolCallId: 'call_1', messageIds: [first.id, second.id] }])
    expect(pairing.unanswered).toEqual([])
    expect(pairing.ok).toBe(false)
  })

  it('reports two calls with one id in one assistant message as a duplicate call, even when one result answers the id (providers refuse the request)', () => {
    // given: one message calls call_1 twice; one tool result for call_1
    const call = assistantCalling(['call_1', 'call_1', 'call_2'])
    const list = [user('read both'), call, toolResult('call_1'), toolResult('call_2')]

    // when
    const pairing = toolPairing(list)

    // then
    expect(pairing.duplicateCalls).toEqual([{ toolCallId: 'call_1', messageIds: [call.id, call.id] }])
    expect(pairing.unanswered).toEqual([])
    expect(pairing.duplicates).toEqual([])
    expect(pairing.ok).toBe(false)
  })

  it('reports a later message that calls an id again before any result as a duplicate call; the first call is the one that pairs', () => {
    // given
    const first = assistantCalling(['call_1'])
    const again = assistantCalling(['call_1'])
    const result = toolResult('call_1', 'a')

    // when
    const pairing = toolPairing([first, again, result])

    // then
    expect(pairing.duplicateCalls).toEqual([{ toolCallId: 'call_1', messageIds: [first.id, again.id] }])
    expect(pairing.unanswered).toEqual([])
    expect(pairing.reusedCalls).toEqual([])
    expect(pairing.ok).toBe(false)
  })

  it('reports an id called again after its result (ids numbered per turn, a re-inserted transcript) as a reused call: a new call the results after it answer', () => {
    // given
    const first = assistantCalling(['call_1'])
    const again = assistantCalling(['call_1'])
    const a = toolResult('call_1', 'a')
    const b = toolResult('call_1', 'b')
    const c = toolResult('call_1', 'c')

    // when
    const answered = toolPairing([first, a, again, b])
    const open = toolPairing([first, a, again])
    const twice = toolPairing([first, a, again, b, c])

    // then: not a duplicate call, not a second result; the reuse is reported, and a list with one is not ok
    expect(answered).toEqual({
      ok: false,
      unanswered: [],
      orphans: [],
      duplicates: [],
      duplicateCalls: [],
      reusedCalls: [{ toolCallId: 'call_1', messageIds: [first.id, again.id] }],
    })
    // then: the later call is the one left open; a third result is a second result of the later call
    expect(open.unanswered).toEqual([{ messageId: again.id, toolCallId: 'call_1' }])
    expect(twice.duplicates).toEqual([{ toolCallId: 'call_1', messageIds: [b.id, c.id] }])
  })

  it('is ok for an empty list and for lists without tools', () => {
    expect(toolPairing([]).ok).toBe(true)
    expect(toolPairing([user('a'), assistant('b')]).ok).toBe(true)
  })
})

describe('toolCallIds / toolResultId', () => {
  it('reads id, else call_id, of assistant tool calls only', () => {
    // given
    const both = createMessage({ role: 'assistant', tool_calls: [{ id: 'a', call_id: 'b' }, { call_id: 'c' }] })

    // when / then
    expect(toolCallIds(both.payload)).toEqual(['a', 'c'])
    expect(toolCallIds(createMessage({ role: 'user', content: 'x', tool_calls: [{ id: 'z' }] }).payload)).toEqual([])
  })

  it('reads tool_call_id, else call_id, of tool results only', () => {
    expect(toolResultId(createMessage({ role: 'tool', tool_call_id: 'a', call_id: 'b', content: '' }).payload)).toBe('a')
    expect(toolResultId(createMessage({ role: 'tool', call_id: 'b', content: '' }).payload)).toBe('b')
    expect(toolResultId(createMessage({ role: 'user', content: 'x', tool_call_id: 'a' }).payload)).toBeUndefined()
  })
})
