import { describe, expect, it } from '@jest/globals'
import { createMessage, toWire, toolPairing, type Message, type MessageId } from '@turnlog/core'

/**
 * `toWire(…, { repairPairing: true })` sends the n-th call of a reused call id as `<id>_<n>`. The
 * incident: a chat tool call carrying the id under both `id` and `call_id` was sent as
 * `{ id: 'call_0_2', call_id: 'call_0' }`: the pairing field renamed, its twin still naming the first
 * call. The rename changes the field pairing reads and every other id field of the same call or
 * result that holds the same id (it names the same call); an id field holding another value (a
 * Responses item id `fc_…`, unique per item) is left alone. Each format that renames is checked.
 */

const fn = { name: 'read', arguments: '{}' }

function repaired(list: readonly Message<unknown>[]): unknown[] {
  const wire: unknown[] = toWire(list, { repairPairing: true })
  // every call of the wire copy pairs with its result, and no call is reused any more
  expect(wire).toHaveLength(list.length)
  const pairing = toolPairing(wire.map((payload, i) => ({ id: `w${i}` as MessageId, payload, format: list[i]?.format ?? 'openai-chat' })))
  expect(pairing).toMatchObject({ ok: true, reusedCalls: [] })
  return wire
}

describe('toWire repairPairing: a reused call id is renamed in every field that names the call (incident: a chat call with `id` and `call_id` renamed in `id` only)', () => {
  it('openai-chat: a call and a result that carry the id under both names are renamed in both', () => {
    // given: `call_0` called, answered, called again (a provider numbering its calls per turn), each
    // call and result carrying the id under both of the names the format reads
    const call = (args: string) =>
      createMessage({
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0', call_id: 'call_0', type: 'function', function: { ...fn, arguments: args } }],
      })
    const result = (content: string) => createMessage({ role: 'tool', tool_call_id: 'call_0', call_id: 'call_0', content })
    const list = [call('{"n":1}'), result('a'), call('{"n":2}'), result('b')]

    // when
    const wire = repaired(list)

    // then: the first call is sent as stored; the second and its result renamed in both fields
    expect(wire).toEqual([
      list[0]?.payload,
      list[1]?.payload,
      {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: 'call_0_2', call_id: 'call_0_2', type: 'function', function: { ...fn, arguments: '{"n":2}' } }],
      },
      { role: 'tool', tool_call_id: 'call_0_2', call_id: 'call_0_2', content: 'b' },
    ])
  })

  it('openai-chat: a `call_id` holding another value than the `id` pairing reads is left alone', () => {
    // given: pairing reads `id`; `call_id` holds something else (a provider's own reference)
    const call = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', call_id: 'ref_1', type: 'function', function: fn }],
    })
    const again = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0', call_id: 'ref_2', type: 'function', function: fn }],
    })
    const list = [
      call,
      createMessage({ role: 'tool', tool_call_id: 'call_0', content: 'a' }),
      again,
      createMessage({ role: 'tool', tool_call_id: 'call_0', content: 'b' }),
    ]

    // when
    const wire = repaired(list)

    // then
    expect(wire[2]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_0_2', call_id: 'ref_2', type: 'function', function: fn }],
    })
    expect(wire[3]).toEqual({ role: 'tool', tool_call_id: 'call_0_2', content: 'b' })
  })

  it('openai-responses: a reused call_id is renamed in the call and its output; the item ids (fc_…, fco_…) are kept', () => {
    // given
    const item = (payload: object) => createMessage(payload as never, { format: 'openai-responses' })
    const list = [
      item({ type: 'function_call', id: 'fc_1', call_id: 'call_0', name: 'read', arguments: '{}' }),
      item({ type: 'function_call_output', id: 'fco_1', call_id: 'call_0', output: 'a' }),
      item({ type: 'function_call', id: 'fc_2', call_id: 'call_0', name: 'read', arguments: '{}' }),
      item({ type: 'function_call_output', id: 'fco_2', call_id: 'call_0', output: 'b' }),
    ]

    // when
    const wire = repaired(list)

    // then
    expect(wire).toEqual([
      list[0]?.payload,
      list[1]?.payload,
      { type: 'function_call', id: 'fc_2', call_id: 'call_0_2', name: 'read', arguments: '{}' },
      { type: 'function_call_output', id: 'fco_2', call_id: 'call_0_2', output: 'b' },
    ])
  })

  it('openai-responses: an item id that holds the call id itself (a bridge that sets id = call_id) is renamed with it, so item ids stay unique', () => {
    // given: OpenAI refuses an input with one item id twice ("Duplicate item found with id …")
    const item = (payload: object) => createMessage(payload as never, { format: 'openai-responses' })
    const list = [
      item({ type: 'function_call', id: 'call_0', call_id: 'call_0', name: 'read', arguments: '{}' }),
      item({ type: 'function_call_output', call_id: 'call_0', output: 'a' }),
      item({ type: 'function_call', id: 'call_0', call_id: 'call_0', name: 'read', arguments: '{}' }),
      item({ type: 'function_call_output', call_id: 'call_0', output: 'b' }),
    ]

    // when
    const wire = repaired(list) as { id?: string }[]

    // then
    expect(wire[2]).toEqual({ type: 'function_call', id: 'call_0_2', call_id: 'call_0_2', name: 'read', arguments: '{}' })
    expect(wire[3]).toEqual({ type: 'function_call_output', call_id: 'call_0_2', output: 'b' })
    const ids = wire.flatMap((w) => (w.id === undefined ? [] : [w.id]))
    expect(new Set(ids).size).toBe(ids.length)
  })

  it('openai-responses: a local_shell_call_output naming the call in both `call_id` and `id` is renamed in both', () => {
    // given
    const item = (payload: object) => createMessage(payload as never, { format: 'openai-responses' })
    const call = (id: string) =>
      item({ type: 'local_shell_call', id, call_id: 'call_0', status: 'completed', action: { type: 'exec', command: ['ls'], env: {} } })
    const output = (text: string) => item({ type: 'local_shell_call_output', id: 'call_0', call_id: 'call_0', output: text })
    const list = [call('lsh_1'), output('a'), call('lsh_2'), output('b')]

    // when
    const wire = repaired(list)

    // then
    expect(wire[2]).toMatchObject({ id: 'lsh_2', call_id: 'call_0_2' })
    expect(wire[3]).toEqual({ type: 'local_shell_call_output', id: 'call_0_2', call_id: 'call_0_2', output: 'b' })
  })

  it('openai-agents: `callId` renamed, a `call_id` twin with it, the provider item id kept', () => {
    // given
    const item = (payload: object) => createMessage(payload as never, { format: 'openai-agents' })
    const list = [
      item({ type: 'function_call', id: 'fc_1', callId: 'call_0', name: 'read', arguments: '{}' }),
      item({ type: 'function_call_result', callId: 'call_0', name: 'read', status: 'completed', output: 'a' }),
      item({ type: 'function_call', id: 'fc_2', callId: 'call_0', name: 'read', arguments: '{}' }),
      item({ type: 'function_call_result', callId: 'call_0', name: 'read', status: 'completed', output: 'b' }),
      item({ type: 'tool_search_call', callId: 'call_0', call_id: 'call_0', execution: 'client', arguments: {} }),
      item({ type: 'tool_search_output', callId: 'call_0', call_id: 'call_0', execution: 'client', tools: [] }),
    ]

    // when
    const wire = repaired(list)

    // then
    expect(wire.slice(2)).toEqual([
      { type: 'function_call', id: 'fc_2', callId: 'call_0_2', name: 'read', arguments: '{}' },
      { type: 'function_call_result', callId: 'call_0_2', name: 'read', status: 'completed', output: 'b' },
      { type: 'tool_search_call', callId: 'call_0_3', call_id: 'call_0_3', execution: 'client', arguments: {} },
      { type: 'tool_search_output', callId: 'call_0_3', call_id: 'call_0_3', execution: 'client', tools: [] },
    ])
  })

  it('anthropic: the tool_use id and the tool_result tool_use_id (one name each)', () => {
    // given
    const m = (payload: object) => createMessage(payload as never, { format: 'anthropic' })
    const use = () => m({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'read', input: {} }] })
    const result = (text: string) => m({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: text }] })
    const list = [use(), result('a'), use(), result('b')]

    // when
    const wire = repaired(list)

    // then
    expect(wire.slice(2)).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0_2', name: 'read', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0_2', content: 'b' }] },
    ])
  })

  it('ai-sdk-model: the tool-call and tool-result toolCallId', () => {
    // given
    const m = (payload: object) => createMessage(payload as never, { format: 'ai-sdk-model' })
    const call = () => m({ role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_0', toolName: 'read', input: {} }] })
    const result = (value: string) =>
      m({ role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_0', toolName: 'read', output: { type: 'text', value } }] })
    const list = [call(), result('a'), call(), result('b')]

    // when
    const wire = repaired(list)

    // then
    expect(wire.slice(2)).toEqual([
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_0_2', toolName: 'read', input: {} }] },
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'call_0_2', toolName: 'read', output: { type: 'text', value: 'b' } }] },
    ])
  })

  it('ai-sdk-ui: the tool part toolCallId; the UI message id is kept', () => {
    // given: a UI part answers its call in place (a later part with its id repeats that call), so the
    // id is reused after a call a chat tool message answered (pairing runs across formats)
    const list = [
      createMessage({ role: 'assistant', content: null, tool_calls: [{ id: 'call_0', type: 'function', function: fn }] }),
      createMessage({ role: 'tool', tool_call_id: 'call_0', content: 'a' }),
      createMessage(
        {
          id: 'msg_2',
          role: 'assistant',
          parts: [{ type: 'tool-read', toolCallId: 'call_0', state: 'output-available', input: {}, output: 'b' }],
        } as never,
        { format: 'ai-sdk-ui' },
      ),
    ]

    // when
    const wire = repaired(list)

    // then
    expect(wire[2]).toEqual({
      id: 'msg_2',
      role: 'assistant',
      parts: [{ type: 'tool-read', toolCallId: 'call_0_2', state: 'output-available', input: {}, output: 'b' }],
    })
  })
})
