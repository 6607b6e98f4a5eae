/**
 * The promises of docs/formats.md that no other test pins, one test each, named after the promise.
 * Pure: no database (the store's promises are in packages/postgres/test/format-promises.int.test.ts).
 */
import { describe, expect, it } from '@jest/globals'
import {
  contentHash,
  createMessage,
  isRedactedPayload,
  isTurnlogError,
  jsonFormat,
  messageFormat,
  parseFormatPayload,
  redactedPayload,
  registerMessageFormat,
  toWire,
  toolPairing,
  type Message,
} from '../src/index.js'

/** The error `f` throws (fails the test when it throws none). */
function thrown(f: () => unknown): { code: string; details: Record<string, unknown> } {
  try {
    f()
  } catch (e) {
    if (isTurnlogError(e)) return { code: e.code, details: (e.details ?? {}) as Record<string, unknown> }
    throw e
  }
  throw new Error('expected a TurnlogError, none was thrown')
}

function message(payload: unknown, format: string): Message<unknown> {
  return createMessage<object>(payload as object, { format })
}

/** Application data a tool input, metadata or provider data may carry, under keys a placeholder keeps elsewhere. */
const SECRET = { name: 'Alice Secret', id: 'SSN-123-45', status: 'diagnosed', type: 'confidential', toolName: 'x-secret' }
const SECRET_STRINGS = Object.values(SECRET)

describe('docs/formats.md promises', () => {
  describe('redaction placeholders', () => {
    const cases: readonly (readonly [string, unknown])[] = [
      ['anthropic', { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { patient: SECRET } }] }],
      [
        'ai-sdk-ui',
        {
          id: 'ui_1',
          role: 'assistant',
          metadata: SECRET,
          parts: [
            {
              type: 'tool-lookup',
              toolCallId: 'call_1',
              state: 'output-available',
              input: SECRET,
              output: SECRET,
              callProviderMetadata: { p: SECRET },
            },
            { type: 'data-profile', data: SECRET },
          ],
        },
      ],
      [
        'ai-sdk-model',
        {
          role: 'assistant',
          content: [
            { type: 'tool-call', toolCallId: 'call_1', toolName: 'lookup', input: SECRET, providerOptions: { p: SECRET } },
            { type: 'tool-result', toolCallId: 'call_1', toolName: 'lookup', output: { type: 'json', value: SECRET } },
          ],
        },
      ],
      ['openai-agents', { type: 'function_call', callId: 'call_1', name: 'lookup', arguments: '{}', providerData: SECRET }],
    ]
    for (const [format, payload] of cases) {
      it(`${format}: every other string is '[redacted]': a name, id or status inside a tool input, metadata or provider data is content, not kept`, () => {
        // given a payload whose application data uses the keys a placeholder keeps for pairing ids, tool names and states
        const stored = parseFormatPayload(payload, format)

        // when
        const placeholder = redactedPayload(stored, format)

        // then none of that data is left, and the placeholder still is a payload of the format that pairs alike
        const text = JSON.stringify(placeholder)
        for (const s of SECRET_STRINGS) expect(text).not.toContain(s)
        expect(isRedactedPayload(placeholder, format)).toBe(true)
        const f = messageFormat(format)
        const parsed = parseFormatPayload(placeholder, format)
        expect(f.toolCalls(parsed)).toEqual(f.toolCalls(stored))
        expect(f.toolResults(parsed)).toEqual(f.toolResults(stored))
        expect(redactedPayload(parsed, format)).toEqual(placeholder)
      })
    }

    it('a "__proto__" key of a payload stays a plain own key of its placeholder (the same shape), its content redacted', () => {
      // given
      const stored = parseFormatPayload(JSON.parse('{"role":"user","content":"hi","__proto__":{"note":"secret"}}'), 'anthropic')

      // when
      const placeholder = redactedPayload(stored, 'anthropic') as unknown as Record<string, unknown>

      // then
      expect(Object.getPrototypeOf(placeholder)).toBe(Object.prototype)
      expect(Object.keys(placeholder)).toEqual(['role', 'content', '__proto__'])
      expect(JSON.stringify(placeholder)).toBe('{"role":"user","content":"[redacted]","__proto__":{"note":"[redacted]"}}')
    })

    it('a registered format whose redactedPayload hook makes no placeholder cannot redact: INVALID_INPUT naming the format', () => {
      // given
      registerMessageFormat({ ...jsonFormat, name: 'promises.leaky-redaction', redactedPayload: (p: unknown) => p })

      // when
      const error = thrown(() => redactedPayload({ text: 'secret' }, 'promises.leaky-redaction'))

      // then
      expect(error).toEqual({ code: 'INVALID_INPUT', details: { format: 'promises.leaky-redaction' } })
    })
  })

  describe('registration', () => {
    it('a format name is lower-case words joined by - or .: any other name is INVALID_INPUT at format.name', () => {
      // given
      const bad = ['', 'A', 'My-format', 'a_b', 'a b', '-a', 'a-', 'a.', '.a', 'a--b', 'a..b', '1a', 'a/b', 'é']
      const good = ['promises.a-b.c1', 'promises2', 'promises-x.y']

      // when / then
      for (const name of bad)
        expect(thrown(() => registerMessageFormat({ ...jsonFormat, name }))).toEqual({
          code: 'INVALID_INPUT',
          details: { field: 'format.name' },
        })
      for (const name of good) expect(() => registerMessageFormat({ ...jsonFormat, name })).not.toThrow()
    })
  })

  describe('content hash and wire bytes', () => {
    it('the same payload text under two formats has one content hash and sends the same bytes (toWire of both built-ins is the payload)', () => {
      // given
      const payload = { role: 'user', content: 'a\u0000b\ud800', __extra: { z: 1, a: [2] } }
      const chat = createMessage(payload)
      const json = message(payload, 'json')

      // when / then
      expect(contentHash(json)).toBe(contentHash(chat))
      expect(JSON.stringify(toWire([json]))).toBe(JSON.stringify(toWire([chat])))
      expect(JSON.stringify(toWire([json])[0])).toBe(JSON.stringify(payload))
    })
  })

  describe('payloads are kept verbatim', () => {
    const cases: readonly (readonly [string, Record<string, unknown>])[] = [
      ['openai-chat', { role: 'user', content: 'x' }],
      ['json', { kind: 'note' }],
      ['openai-responses', { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }],
      ['openai-agents', { type: 'function_call', callId: 'c1', name: 'f', arguments: '{}' }],
      ['anthropic', { role: 'user', content: [{ type: 'text', text: 'x' }] }],
      ['ai-sdk-ui', { id: 'u1', role: 'user', parts: [{ type: 'text', text: 'x' }] }],
      ['ai-sdk-model', { role: 'user', content: [{ type: 'text', text: 'x' }] }],
    ]
    for (const [format, base] of cases) {
      it(`${format}: unknown fields (also "__proto__" and "constructor"), key order, NUL and lone surrogates are kept in the payload and the wire copy`, () => {
        // given extra fields first and last, named like prototype keys, with hostile strings
        const payload = JSON.parse(
          JSON.stringify({ zz_first: 'a\u0000\udc00', ...base, constructor: { prototype: 1 }, later: '\ud83d' }).replace(
            '"later"',
            '"__proto__":{"polluted":true},"later"',
          ),
        ) as Record<string, unknown>

        // when
        const m = message(payload, format)
        const [wire] = toWire([m]) as Record<string, unknown>[]

        // then
        expect(Object.keys(m.payload as object)).toEqual(Object.keys(payload))
        expect(JSON.stringify(m.payload)).toBe(JSON.stringify(payload))
        expect(JSON.stringify(wire)).toBe(JSON.stringify(payload))
        expect(Object.getPrototypeOf(wire)).toBe(Object.prototype)
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
      })
    }
  })

  describe('anthropic', () => {
    it('unknown block types pair nothing, even with a tool_use_id or an id', () => {
      // given
      const call = message({ role: 'assistant', content: [{ type: 'future_use', id: 'toolu_9', name: 'f', input: {} }] }, 'anthropic')
      const result = message({ role: 'user', content: [{ type: 'future_result', tool_use_id: 'toolu_1' }] }, 'anthropic')

      // when
      const pairing = toolPairing([call, result])

      // then
      expect(pairing).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [] })
    })

    it('a tool_result needs a boolean is_error and a non-empty tool_use_id; a tool_use an object input (INVALID_MESSAGE at the path)', () => {
      const refused = (payload: unknown): unknown => thrown(() => message(payload, 'anthropic'))
      const issue = (path: string[]): unknown =>
        expect.objectContaining({
          code: 'INVALID_MESSAGE',
          details: expect.objectContaining({ format: 'anthropic', issues: [expect.objectContaining({ path })] }),
        })
      expect(refused({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', is_error: 'yes' }] })).toEqual(
        issue(['content', '0', 'is_error']),
      )
      expect(refused({ role: 'user', content: [{ type: 'tool_result', tool_use_id: '' }] })).toEqual(issue(['content', '0', 'tool_use_id']))
      expect(refused({ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: [] }] })).toEqual(
        issue(['content', '0', 'input']),
      )
    })
  })

  describe('openai-responses', () => {
    it('a type that is not a string is refused: INVALID_MESSAGE at type, details.format openai-responses', () => {
      const error = thrown(() => message({ type: 5, role: 'user', content: 'x' }, 'openai-responses'))
      expect(error.code).toBe('INVALID_MESSAGE')
      expect(error.details).toMatchObject({ format: 'openai-responses', issues: [{ path: ['type'] }] })
    })

    it('an item without type, with an id and no role, is an item_reference', () => {
      const m = message({ id: 'msg_1' }, 'openai-responses')
      expect(messageFormat('openai-responses').preview(m.payload).kind).toBe('item_reference')
    })

    it('hosted calls, a server tool_search_call and program items open nothing; a client tool_search_call opens its call_id', () => {
      // given
      const hosted = [
        { type: 'web_search_call', id: 'ws_1', status: 'completed', action: { type: 'search', query: 'q' } },
        { type: 'tool_search_call', call_id: 'ts_server', execution: 'server', arguments: {} },
        { type: 'program', call_id: 'p_1' },
      ].map((p) => message(p, 'openai-responses'))
      const client = message({ type: 'tool_search_call', call_id: 'ts_client', execution: 'client', arguments: {} }, 'openai-responses')

      // when
      const pairing = toolPairing([...hosted, client])

      // then
      expect(pairing.unanswered).toEqual([{ messageId: client.id, toolCallId: 'ts_client' }])
      expect(pairing.orphans).toEqual([])
    })
  })

  describe('openai-agents', () => {
    it('a hosted_tool_call needs string arguments and output when present, and opens nothing; nor do program items, unknown and unknown kinds', () => {
      expect(thrown(() => message({ type: 'hosted_tool_call', name: 'web', arguments: 5 }, 'openai-agents'))).toMatchObject({
        code: 'INVALID_MESSAGE',
        details: { format: 'openai-agents', issues: [{ path: ['arguments'] }] },
      })
      const items = [
        { type: 'hosted_tool_call', name: 'web', callId: 'c1', arguments: '{}', output: 'x' },
        { type: 'program', callId: 'c2', code: 'x', fingerprint: 'f' },
        { type: 'unknown', callId: 'c3' },
        { type: 'future_call', callId: 'c4' },
      ].map((p) => message(p, 'openai-agents'))
      expect(toolPairing(items)).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [] })
    })
  })

  describe('ai-sdk-ui', () => {
    it('the repair rewrites an open part to output-error, dropping output and inputEncoding, and an approval unless it was granted', () => {
      // given
      const m = message(
        {
          id: 'u1',
          role: 'assistant',
          parts: [
            { type: 'tool-f', toolCallId: 'c1', state: 'input-available', input: { a: 1 }, inputEncoding: 'x', output: 5 },
            {
              type: 'dynamic-tool',
              toolName: 'g',
              toolCallId: 'c2',
              state: 'approval-responded',
              input: {},
              approval: { id: 'a1', approved: false },
            },
            { type: 'tool-h', toolCallId: 'c3', state: 'approval-responded', input: {}, approval: { id: 'a2', approved: true } },
          ],
        },
        'ai-sdk-ui',
      )

      // when
      const [wire] = toWire([m], { repairPairing: true, interruptedContent: 'gone' }) as { parts: Record<string, unknown>[] }[]

      // then
      expect(wire?.parts).toEqual([
        { type: 'tool-f', toolCallId: 'c1', state: 'output-error', input: { a: 1 }, errorText: 'gone' },
        { type: 'dynamic-tool', toolName: 'g', toolCallId: 'c2', state: 'output-error', input: {}, errorText: 'gone' },
        { type: 'tool-h', toolCallId: 'c3', state: 'output-error', input: {}, approval: { id: 'a2', approved: true }, errorText: 'gone' },
      ])
    })

    it('has no orphans: a part in a result state with no earlier call opens and answers its call itself', () => {
      const m = message(
        { id: 'u1', role: 'assistant', parts: [{ type: 'tool-f', toolCallId: 'c1', state: 'output-available', input: {}, output: 1 }] },
        'ai-sdk-ui',
      )
      expect(toolPairing([m])).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [] })
    })
  })

  describe('ai-sdk-model', () => {
    it('a payload is JSON: binary image/file data as a Uint8Array or a URL is refused (INVALID_MESSAGE at its path)', () => {
      for (const image of [new Uint8Array([1, 2]), new URL('https://example.com/a.png')]) {
        expect(thrown(() => message({ role: 'user', content: [{ type: 'image', image }] }, 'ai-sdk-model'))).toMatchObject({
          code: 'INVALID_MESSAGE',
          details: { issues: [{ path: ['content', 0, 'image'] }] },
        })
      }
      expect(() =>
        message({ role: 'user', content: [{ type: 'image', image: 'data:image/png;base64,AA==' }] }, 'ai-sdk-model'),
      ).not.toThrow()
    })
  })
})
