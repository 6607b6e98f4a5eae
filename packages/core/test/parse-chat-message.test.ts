import { describe, expect, it } from '@jest/globals'
import { ChatMessageSchema, parseChatMessage } from '@turnlog/core'

describe('parseChatMessage', () => {
  it('keeps unknown provider fields, in their original key order, at every level', () => {
    // given: provider extras before, between and after the known fields
    const input = JSON.parse(`{
      "reasoning_details": [{"type": "reasoning.encrypted", "data": "x", "id": "r1"}],
      "role": "assistant",
      "zzz": 1,
      "content": "",
      "tool_calls": [{"index": 0, "id": "call_01", "type": "function",
        "function": {"name": "read_file", "arguments": "{}", "strict": true}, "cache_control": {"type": "ephemeral"}}],
      "aaa": {"z": 1, "a": 2, "10": 3, "2": 4},
      "reasoning_content": "...",
      "finish_reason": "tool_calls"
    }`) as Record<string, unknown>

    // when
    const payload = parseChatMessage(input) as Record<string, unknown>

    // then
    expect(payload).toEqual(input)
    expect(Object.keys(payload)).toEqual([
      'reasoning_details',
      'role',
      'zzz',
      'content',
      'tool_calls',
      'aaa',
      'reasoning_content',
      'finish_reason',
    ])
    const call = (payload['tool_calls'] as Record<string, unknown>[])[0] as Record<string, unknown>
    expect(Object.keys(call)).toEqual(['index', 'id', 'type', 'function', 'cache_control'])
    expect(Object.keys(call['function'] as object)).toEqual(['name', 'arguments', 'strict'])
    expect(Object.keys(payload['aaa'] as object)).toEqual(Object.keys(input['aaa'] as object))
  })

  it('returns a deep-frozen copy, not the input', () => {
    // given
    const input = { role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x/y.png' } }] }

    // when
    const payload = parseChatMessage(input)

    // then
    expect(payload).not.toBe(input)
    expect(Object.isFrozen(payload)).toBe(true)
    expect(Object.isFrozen((payload.content as readonly object[])[0])).toBe(true)
    expect(Object.isFrozen(input)).toBe(false)
  })

  it.each([
    ['system', { role: 'system', content: 'You are …' }],
    ['developer', { role: 'developer', content: [{ type: 'text', text: 'rules' }] }],
    [
      'user with parts',
      {
        role: 'user',
        content: [
          { type: 'text', text: 'see' },
          { type: 'image_url', image_url: { url: 'data:,' } },
        ],
        name: 'ana',
      },
    ],
    [
      'assistant with null content and tool calls',
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] },
    ],
    ['assistant without content', { role: 'assistant', tool_calls: [{ call_id: 'c1' }] }],
    ['tool with tool_call_id', { role: 'tool', tool_call_id: 'c1', content: '{"ok":true}' }],
    ['tool with call_id', { role: 'tool', call_id: 'c1', content: [{ type: 'text', text: 'ok' }] }],
  ])('accepts %s', (_what, input) => {
    expect(parseChatMessage(input)).toEqual(input)
    expect(ChatMessageSchema.safeParse(input).success).toBe(true)
  })
})
