/**
 * Attacks docs/security.md on the chat redaction placeholder: "`{ role, content: '[redacted]' }` plus
 * only what tool-call pairing needs … The live list keeps its shape; `toWire` stays acceptable to
 * providers." A function call keeps `function: { name, arguments: '{}' }` so that the wire copy of a
 * redacted call is still one OpenAI accepts. An OpenAI custom tool call (`type: 'custom'`, the
 * `custom: { name, input }` member of the wire type `OpenAIChatWireToolCall`) keeps only `{ id, type }`:
 * the API refuses a custom call without `custom` (a required field), so every request that replays a
 * session holding a redacted custom call fails.
 *
 * Fixed: the placeholder keeps `custom: { name, input: '[redacted]' }` (the content marker: a custom
 * tool's input is free text, and the openai-responses placeholder of a `custom_tool_call` also has
 * `input: '[redacted]'`), `isRedactedPayload` accepts exactly that shape, and so does the database's
 * `turnlog.is_redaction_placeholder` (migration 0009; packages/postgres/test/security/
 * redaction-custom-tool-call.int.test.ts stores one through `store.redact`).
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isRedactedPayload, redactedPayload, toWire, type ChatMessage } from '@turnlog/core'

const customCall = {
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: 'SELECT secret FROM vault' } }],
} as const satisfies ChatMessage

describe('the chat redaction placeholder on the wire', () => {
  it('keeps a function call acceptable: function name, arguments "{}"', () => {
    // given
    const placeholder = redactedPayload({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"secret"}' } }],
    })

    // when
    const [wire] = toWire([createMessage(placeholder)])

    // then
    expect(wire).toMatchObject({ tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{}' } }] })
  })

  // was a bug: a redacted OpenAI custom tool call lost its required `custom` member (docs/security.md:
  // "toWire stays acceptable to providers")
  it('keeps a custom tool call acceptable: custom { name, input } with no content', () => {
    // given
    const placeholder = redactedPayload(customCall)

    // when
    const [wire] = toWire([createMessage(placeholder)])

    // then: the shape OpenAI requires, and nothing of the input
    const call = (wire as { tool_calls: Record<string, unknown>[] }).tool_calls[0]
    expect(call).toMatchObject({ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: expect.any(String) as unknown } })
    expect(JSON.stringify(wire)).not.toContain('secret')
  })

  it('keeps custom { name, input: "[redacted]" } beside the pairing ids, and is idempotent', () => {
    // given
    const placeholder = redactedPayload(customCall)

    // when
    const again = redactedPayload(placeholder)

    // then
    expect(placeholder).toEqual({
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: '[redacted]' } }],
    })
    expect(again).toEqual(placeholder)
    expect(isRedactedPayload(placeholder, 'openai-chat')).toBe(true)
    expect(isRedactedPayload(placeholder)).toBe(true)
  })

  it('drops whatever else a custom call carries (provider extras inside custom), and a custom without a name', () => {
    // given
    const payload = {
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: 'c1', type: 'custom', custom: { name: 'grep', input: 'secret', format: { type: 'grammar', definition: 'secret' } } },
        { id: 'c2', type: 'custom', custom: { input: 'secret' } },
      ],
    } as unknown as ChatMessage

    // when
    const placeholder = redactedPayload(payload)

    // then
    expect(placeholder.tool_calls).toEqual([
      { id: 'c1', type: 'custom', custom: { name: 'grep', input: '[redacted]' } },
      { id: 'c2', type: 'custom' },
    ])
    expect(JSON.stringify(placeholder)).not.toContain('secret')
    expect(isRedactedPayload(placeholder, 'openai-chat')).toBe(true)
  })

  it.each<[string, unknown]>([
    ['the original input kept', { name: 'run_sql', input: 'SELECT secret FROM vault' }],
    ["the function's '{}' as input", { name: 'run_sql', input: '{}' }],
    ['an empty input', { name: 'run_sql', input: '' }],
    ['an extra key', { name: 'run_sql', input: '[redacted]', note: 'secret' }],
    ['no input', { name: 'run_sql' }],
    ['a name that is not a string', { name: { secret: 'x' }, input: '[redacted]' }],
    ['no name', { input: '[redacted]' }],
    ['a string', 'SELECT secret FROM vault'],
    ['an array', [{ name: 'run_sql', input: '[redacted]' }]],
    ['null', null],
  ])('isRedactedPayload refuses a custom call placeholder with %s', (_, custom) => {
    // given
    const forged = { role: 'assistant', content: '[redacted]', tool_calls: [{ id: 'call_sql_1', type: 'custom', custom }] }

    // when
    const verdict = isRedactedPayload(forged, 'openai-chat')

    // then (without a format a content-free shape may still pass as a structural placeholder; one with
    // text other than '[redacted]' or a kept key's never does)
    expect(verdict).toBe(false)
    if (JSON.stringify(custom).includes('secret')) expect(isRedactedPayload(forged)).toBe(false)
  })

  it('still accepts a custom call placeholder stored before the fix ({ id, type } only)', () => {
    // given
    const old = { role: 'assistant', content: '[redacted]', tool_calls: [{ id: 'call_sql_1', type: 'custom' }] }

    // when / then
    expect(isRedactedPayload(old, 'openai-chat')).toBe(true)
  })
})
