import { describe, expect, it } from '@jest/globals'
import type { MessageParam, UserMessageParam } from '@anthropic-ai/sdk/resources/messages'
import {
  ANTHROPIC_FORMAT,
  INTERRUPTED_TOOL_RESULT,
  TurnlogError,
  anthropicFormat,
  createMessage,
  messageFormatNames,
  parseFormatPayload,
  toWire,
  toolPairing,
  type AnthropicMessageParam,
  type Message,
} from '@turnlog/core'
import {
  VALID_FIXTURES,
  assistantFuture,
  assistantServerToolError,
  assistantServerTools,
  assistantToolUse,
  assistantUnanswered,
  response,
  responseAsParam,
  systemBlocks,
  userBlocks,
  userOrphanResult,
  userText,
  userToolResults,
} from './anthropic-fixtures.js'

/** A message of the `anthropic` format (the payload is validated at run time). */
const anthropic = (payload: object): Message<AnthropicMessageParam> =>
  createMessage<AnthropicMessageParam>(payload as AnthropicMessageParam, { format: ANTHROPIC_FORMAT })

/** The INVALID_MESSAGE error `parseFormatPayload` throws for `payload`, or a failure. */
function refusal(payload: unknown): TurnlogError {
  try {
    parseFormatPayload(payload, ANTHROPIC_FORMAT)
  } catch (e) {
    if (e instanceof TurnlogError) return e
    throw e
  }
  throw new Error('expected INVALID_MESSAGE')
}

/** The paths (joined by `.`) of a refusal's zod issues. */
const paths = (e: TurnlogError): string[] => ((e.details?.['issues'] ?? []) as { path: string[] }[]).map((i) => i.path.join('.'))

/** A user message with an orphan result (no call opened `toolu_02Orphan`) followed by text. */
const orphanWithText = {
  role: 'user',
  content: [
    { type: 'tool_result', tool_use_id: 'toolu_02Orphan', content: 'late' },
    { type: 'text', text: 'hello' },
  ],
} as const

describe('anthropic format', () => {
  it('is registered under its name', () => {
    expect(messageFormatNames()).toContain('anthropic')
    expect(anthropicFormat.name).toBe('anthropic')
  })

  it.each(Object.entries(VALID_FIXTURES))(
    'accepts the SDK-typed fixture %s verbatim (key order, unknown fields and block types kept)',
    (_name, payload) => {
      // when
      const m = anthropic(payload)

      // then
      expect(m.format).toBe('anthropic')
      expect(JSON.stringify(m.payload)).toBe(JSON.stringify(payload))
    },
  )

  it.each([
    ['a missing role', { content: 'x' }, 'role'],
    ['a chat role', { role: 'tool', content: 'x' }, 'role'],
    ['missing content', { role: 'user' }, 'content'],
    ['null content', { role: 'assistant', content: null }, 'content'],
    ['a block without a type', { role: 'user', content: [{ text: 'x' }] }, 'content.0.type'],
    ['a text block without text', { role: 'user', content: [{ type: 'text' }] }, 'content.0.text'],
    ['a tool_use without an id', { role: 'assistant', content: [{ type: 'tool_use', name: 'f', input: {} }] }, 'content.0.id'],
    ['a tool_use with an empty id', { role: 'assistant', content: [{ type: 'tool_use', id: '', name: 'f', input: {} }] }, 'content.0.id'],
    [
      'a tool_use whose input is a string',
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: '{}' }] },
      'content.0.input',
    ],
    ['a tool_result without tool_use_id', { role: 'user', content: [{ type: 'tool_result', content: 'x' }] }, 'content.0.tool_use_id'],
    [
      'a tool_result with a bad is_error',
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', is_error: 'yes' }] },
      'content.0.is_error',
    ],
    [
      'a tool_result holding a text block without text',
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] }] },
      'content.0.content.0.text',
    ],
    ['a tool_result in an assistant turn', { role: 'assistant', content: [{ type: 'tool_result', tool_use_id: 't' }] }, 'content.0.type'],
    ['a tool_use in a user turn', { role: 'user', content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] }, 'content.0.type'],
    ['thinking in a user turn', { role: 'user', content: [{ type: 'thinking', thinking: 'x', signature: 's' }] }, 'content.0.type'],
    ['thinking without a signature', { role: 'assistant', content: [{ type: 'thinking', thinking: 'x' }] }, 'content.0.signature'],
    [
      'a server tool result without content',
      { role: 'assistant', content: [{ type: 'web_search_tool_result', tool_use_id: 's' }] },
      'content.0.content',
    ],
    ['an image without a source', { role: 'user', content: [{ type: 'image' }] }, 'content.0.source'],
    ['an image in a system turn', { role: 'system', content: [{ type: 'image', source: { type: 'url', url: 'u' } }] }, 'content.0.type'],
    [
      'a search_result without a title',
      { role: 'user', content: [{ type: 'search_result', source: 's', content: [] }] },
      'content.0.title',
    ],
    [
      'two tool_use blocks with one id',
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 't', name: 'f', input: {} },
          { type: 'tool_use', id: 't', name: 'g', input: {} },
        ],
      },
      'content.1.id',
    ],
    [
      'two results for one call in a message',
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 't' },
          { type: 'tool_result', tool_use_id: 't' },
        ],
      },
      'content.1.tool_use_id',
    ],
    ['a response Message', response, 'type'],
  ])('refuses %s with INVALID_MESSAGE at %s', (_what, payload, path) => {
    // when
    const e = refusal(payload)

    // then
    expect(e.code).toBe('INVALID_MESSAGE')
    expect(e.details?.['format']).toBe('anthropic')
    expect(paths(e)).toContain(path)
    expect(e.message).toContain('anthropic message')
  })

  it("accepts a response's { role, content } and keeps the response id outside the payload (externalId, meta)", () => {
    // when
    const m = createMessage(responseAsParam, {
      format: ANTHROPIC_FORMAT,
      externalId: response.id,
      scope: 'anthropic',
      meta: { model: response.model, stop_reason: response.stop_reason, usage: { input_tokens: 12, output_tokens: 6 } },
    })

    // then
    expect(m.payload).toEqual({ role: 'assistant', content: [{ type: 'text', text: 'Hello!', citations: null }] })
    expect(m.externalId).toBe(response.id)
    expect(m.id).toBe(createMessage(responseAsParam, { format: ANTHROPIC_FORMAT, externalId: response.id, scope: 'anthropic' }).id)
    expect(toWire([m])).toEqual([m.payload])
  })

  it('reads tool_use ids as calls and tool_result tool_use_ids as results, in block order', () => {
    expect(anthropicFormat.toolCalls(assistantToolUse)).toEqual(['toolu_01A09q90qw90lq917835lq9', 'toolu_01B7dbr4Rq4Sp7zQ2w9Wtqrk'])
    expect(anthropicFormat.toolResults(assistantToolUse)).toEqual([])
    expect(anthropicFormat.toolResults(userToolResults)).toEqual(['toolu_01A09q90qw90lq917835lq9', 'toolu_01B7dbr4Rq4Sp7zQ2w9Wtqrk'])
    expect(anthropicFormat.toolCalls(userToolResults)).toEqual([])
    expect(anthropicFormat.toolCalls(userText)).toEqual([])
    expect(anthropicFormat.toolResults(userText)).toEqual([])
  })

  it('pairs no server tool: server_tool_use and its result blocks open and answer nothing (Anthropic runs them)', () => {
    // given: a server_tool_use standing without its result is valid (a turn paused for a client tool)
    const dangling: AnthropicMessageParam = {
      role: 'assistant',
      content: [
        { type: 'server_tool_use', id: 'srvtoolu_01Paused', name: 'web_search', input: { query: 'x' } },
        { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
      ],
    }

    // then
    for (const p of [assistantServerTools, assistantServerToolError]) {
      expect(anthropicFormat.toolCalls(p)).toEqual([])
      expect(anthropicFormat.toolResults(p)).toEqual([])
    }
    expect(anthropicFormat.toolCalls(dangling)).toEqual(['toolu_01A09q90qw90lq917835lq9'])
    expect(anthropicFormat.toolCalls(assistantFuture as AnthropicMessageParam)).toEqual([])
    expect(anthropicFormat.toolResults(assistantFuture as AnthropicMessageParam)).toEqual([])
  })

  it('finds pairing across a session: calls answered, an unanswered call and an orphan result', () => {
    // given
    const list = [
      anthropic(userText),
      anthropic(assistantToolUse),
      anthropic(userToolResults),
      anthropic(assistantServerTools),
      anthropic(assistantUnanswered),
      anthropic(userOrphanResult),
    ]

    // when
    const p = toolPairing(list)

    // then
    expect(p.unanswered).toEqual([{ messageId: list[4]?.id, toolCallId: 'toolu_01Unanswered' }])
    expect(p.orphans).toEqual([{ messageId: list[5]?.id, toolCallId: 'toolu_01Orphan' }])
    expect(p.duplicates).toEqual([])
  })

  it("synthesises the interrupted result as one user message of is_error tool_result blocks, valid in its own schema and typed as the SDK's MessageParam", () => {
    // when
    const results: MessageParam[] = anthropicFormat.interruptedResults(['toolu_a', 'toolu_b'], 'interrupted')
    const one: UserMessageParam | undefined = anthropicFormat.interruptedResults(['toolu_c'], 'x')[0]

    // then
    expect(results).toEqual([
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_a', content: 'interrupted', is_error: true },
          { type: 'tool_result', tool_use_id: 'toolu_b', content: 'interrupted', is_error: true },
        ],
      },
    ])
    for (const r of [...results, one]) expect(anthropicFormat.schema.safeParse(r).success).toBe(true)
    expect(anthropicFormat.interruptedResults([], 'x')).toEqual([])
  })

  it('repairs an unanswered call with a user tool_result message right after the call (before the next user text, which the API joins into that turn)', () => {
    // given
    const list = [anthropic(userText), anthropic(assistantUnanswered), anthropic({ role: 'user', content: 'and now?' })]

    // when
    const wire = toWire(list, { repairPairing: true })

    // then
    expect(wire).toEqual([
      userText,
      assistantUnanswered,
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01Unanswered', content: INTERRUPTED_TOOL_RESULT, is_error: true }],
      },
      { role: 'user', content: 'and now?' },
    ])
    expect(toolPairing(wire.map((payload) => anthropic(payload as AnthropicMessageParam))).ok).toBe(true)
  })

  it('answers the missing one of two calls after the recorded results', () => {
    // given
    const results = { role: 'user', content: [userToolResults.content[0]] } as const
    const list = [anthropic(assistantToolUse), anthropic(results)]

    // when
    const wire = toWire(list, { repairPairing: true, interruptedContent: 'lost' })

    // then
    expect(wire).toEqual([
      assistantToolUse,
      results,
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01B7dbr4Rq4Sp7zQ2w9Wtqrk', content: 'lost', is_error: true }] },
    ])
  })

  it('repairs an orphan result by removing its block: the message goes when nothing else is left, and keeps its other blocks otherwise', () => {
    // given
    const mixed = {
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01Orphan', content: 'late' },
        { type: 'tool_result', tool_use_id: 'toolu_01A09q90qw90lq917835lq9', content: 'ok' },
      ],
    } as const
    const list = [
      anthropic(userOrphanResult),
      anthropic(assistantToolUse),
      anthropic(mixed),
      anthropic(userToolResults),
      anthropic(orphanWithText),
    ]

    // when
    const wire = toWire(list, { repairPairing: true })

    // then: the orphan-only message is not sent; the orphan block goes; a duplicate result block goes
    expect(wire).toEqual([
      assistantToolUse,
      { role: 'user', content: [mixed.content[1]] },
      { role: 'user', content: [userToolResults.content[1], userToolResults.content[2]] },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
    ])
    expect(toWire(list)).toEqual(list.map((m) => m.payload))
  })

  it('puts the interrupted result before a message whose every result is dropped (its text follows the results)', () => {
    // given
    const list = [anthropic(assistantUnanswered), anthropic(orphanWithText)]

    // when
    const wire = toWire(list, { repairPairing: true })

    // then
    expect(wire).toEqual([
      assistantUnanswered,
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'toolu_01Unanswered', content: INTERRUPTED_TOOL_RESULT, is_error: true }],
      },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
    ])
  })

  it('toWire returns a fresh, mutable deep copy equal to the payload', () => {
    // given
    const m = anthropic(userBlocks)
    const before = JSON.stringify(m.payload)

    // when
    const [wire] = toWire([m]) as MessageParam[]
    const direct = anthropicFormat.toWire(m.payload) as { content: { text?: string }[] }

    // then
    expect(wire).toEqual(userBlocks)
    expect(wire).not.toBe(m.payload)
    expect(Object.isFrozen(wire)).toBe(false)
    ;(wire!.content as { text?: string }[])[0]!.text = 'edited'
    direct.content[0]!.text = 'edited too'
    expect(JSON.stringify(m.payload)).toBe(before)
  })

  it('previews role, kind and text', () => {
    expect(anthropicFormat.preview(userText)).toEqual({ role: 'user', kind: 'text', text: 'What is the weather in Paris?' })
    expect(anthropicFormat.preview(systemBlocks)).toEqual({ role: 'system', kind: 'text', text: 'Answer briefly.' })
    const calls = anthropicFormat.preview(assistantToolUse)
    expect(calls.kind).toBe('tool_calls')
    expect(calls.text).toContain('Let me check.')
    expect(calls.text).toContain('[tool_use get_weather] {"city":"Paris","unit":"celsius"}')
    expect(calls.text).toContain('[thinking] I should look up the weather.')
    const results = anthropicFormat.preview(userToolResults)
    expect(results).toEqual({
      role: 'user',
      kind: 'tool_result',
      text: '[tool_result] 12°C, cloudy [tool_result error] clock unavailable Also, keep it short.',
    })
    expect(anthropicFormat.preview({ role: 'assistant', content: [{ type: 'thinking', thinking: 'hm', signature: 's' }] }).kind).toBe(
      'thinking',
    )
    expect(anthropicFormat.preview(assistantFuture as AnthropicMessageParam).text).toBe('[hologram] Here is a hologram.')
    expect(anthropicFormat.preview(assistantServerTools).text).toContain('[server_tool_use web_search]')
  })
})
