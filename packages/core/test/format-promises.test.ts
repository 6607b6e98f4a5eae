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
const SECRET = {
  name: 'Alice Secret',
  id: 'SSN-123-45',
  status: 'diagnosed',
  type: 'confidential',
  toolName: 'x-secret',
  'alice@example.com': { visits: 3 },
}
/** What a placeholder must not show: the values, and the key that is data too. */
const SECRET_STRINGS = [...Object.values(SECRET).filter((v) => typeof v === 'string'), 'alice@example.com']

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
      it(`${format}: application data (a tool input, metadata, provider data) keeps none of its strings or keys, not even a name, id or status`, () => {
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

    it('an optional hook that is not a function is INVALID_INPUT at format.<hook>, and nothing is registered', () => {
      for (const hook of ['withoutResults', 'withoutCalls', 'answerInPlace', 'renameToolIds']) {
        const name = `promises.bad-${hook.toLowerCase()}`
        expect(thrown(() => registerMessageFormat({ ...jsonFormat, name, [hook]: 'not a function' }))).toEqual({
          code: 'INVALID_INPUT',
          details: { field: `format.${hook}` },
        })
        // the name is still free: nothing was registered
        expect(() => registerMessageFormat({ ...jsonFormat, name })).not.toThrow()
      }
    })
  })

  describe('the format seam', () => {
    /** A format whose one message may carry several results (`answers`), with no withoutResults hook. */
    registerMessageFormat({
      ...jsonFormat,
      name: 'promises.multi-results',
      toolCalls: (p: Record<string, unknown>) => (Array.isArray(p['calls']) ? (p['calls'] as string[]) : []),
      toolResults: (p: Record<string, unknown>) => (Array.isArray(p['answers']) ? (p['answers'] as string[]) : []),
      interruptedResults: (ids: readonly string[]) => [{ answers: [...ids], interrupted: true }],
    })
    const multi = (p: Record<string, unknown>): Message<unknown> => message(p, 'promises.multi-results')

    it('without withoutResults, a message is left out when every result it carries is dropped, and sent whole otherwise', () => {
      // given a call c1; a message answering c1 and an orphan o1; one carrying only orphans o2, o3
      const call = multi({ calls: ['c1'] })
      const mixed = multi({ answers: ['c1', 'o1'], text: 'kept whole' })
      const orphansOnly = multi({ answers: ['o2', 'o3'] })

      // when
      const wire = toWire([call, mixed, orphansOnly], { repairPairing: true })

      // then
      expect(wire).toEqual([{ calls: ['c1'] }, { answers: ['c1', 'o1'], text: 'kept whole' }])
    })
  })

  describe('meta', () => {
    it('meta is a deep-frozen JSON copy in the envelope, never on the wire', () => {
      // given
      const meta = { usage: { tokens: [1, 2] }, trace: 'x' }

      // when
      const m = createMessage({ role: 'user', content: 'hi' }, { meta })
      meta.usage.tokens.push(3)

      // then
      expect(m.meta).toEqual({ usage: { tokens: [1, 2] }, trace: 'x' })
      expect(Object.isFrozen(m.meta)).toBe(true)
      expect(Object.isFrozen((m.meta as { usage: { tokens: unknown } }).usage.tokens)).toBe(true)
      expect(JSON.stringify(toWire([m]))).toBe('[{"role":"user","content":"hi"}]')
    })
  })

  describe('content hash and wire bytes', () => {
    it('the same payload text under two formats has one content hash and sends the same bytes (toWire of both built-ins is the payload)', () => {
      // given
      const payload = { role: 'user' as const, content: 'a\u0000b\ud800', __extra: { z: 1, a: [2] } }
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
      expect(pairing).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
    })

    it("placement rules are for the turn's own blocks: a tool_use or thinking block inside a tool_result's content is kept, checked for its fields only, and pairs nothing", () => {
      // given
      const nested = {
        type: 'tool_result',
        tool_use_id: 'toolu_1',
        content: [
          { type: 'tool_use', id: 'toolu_2', name: 'f', input: {} },
          { type: 'thinking', thinking: 'x', signature: 's' },
        ],
      }
      const call = message({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'f', input: {} }] }, 'anthropic')

      // when
      const m = message({ role: 'user', content: [nested] }, 'anthropic')

      // then
      expect(m.payload).toEqual({ role: 'user', content: [nested] })
      expect(toolPairing([call, m])).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
      expect(
        thrown(() =>
          message({ role: 'user', content: [{ ...nested, content: [{ type: 'tool_use', id: 'toolu_2', input: {} }] }] }, 'anthropic'),
        ),
      ).toMatchObject({
        code: 'INVALID_MESSAGE',
        details: { issues: [{ path: ['content', '0', 'content', '0', 'name'] }] },
      })
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
    it('an item without type, with an id and no role, is an item_reference', () => {
      const m = message({ id: 'msg_1' }, 'openai-responses')
      expect(messageFormat('openai-responses').preview(m.payload).kind).toBe('item_reference')
    })

    it('program and program_output items (run by the provider) open and answer nothing', () => {
      const items = [
        { type: 'program', call_id: 'p_1', code: 'x' },
        { type: 'program_output', call_id: 'p_1', output: 'y' },
        { type: 'program_output', call_id: 'p_2', output: 'z' },
      ].map((p) => message(p, 'openai-responses'))
      expect(toolPairing(items)).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
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
      expect(toolPairing(items)).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
    })
  })

  describe('openai-agents snake_case', () => {
    it('a function call with a snake_case call_id (a Responses item) is refused: callId is required', () => {
      const error = thrown(() => message({ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' }, 'openai-agents'))
      expect(error).toMatchObject({ code: 'INVALID_MESSAGE', details: { format: 'openai-agents', issues: [{ path: ['callId'] }] } })
    })

    it('providerData, when present, must be an object', () => {
      for (const providerData of [1, 'x', [], null])
        expect(thrown(() => message({ role: 'user', content: 'x', providerData }, 'openai-agents'))).toMatchObject({
          code: 'INVALID_MESSAGE',
          details: { format: 'openai-agents', issues: [{ path: ['providerData'] }] },
        })
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
      expect(toolPairing([m])).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
    })
  })

  describe('ai-sdk-model', () => {
    it('the repair removes an orphan result; a tool message left with nothing is not sent', () => {
      // given a tool message whose only result answers no call
      const orphan = message(
        { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'nope', toolName: 'f', output: { type: 'text', value: 'x' } }] },
        'ai-sdk-model',
      )
      const text = message({ role: 'user', content: 'hi' }, 'ai-sdk-model')

      // when / then
      expect(toWire([text, orphan], { repairPairing: true })).toEqual([{ role: 'user', content: 'hi' }])
    })

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

  describe("what is validated: every field the doc's tables require is checked", () => {
    /** `payload` without the field at `path` (dot-separated). */
    function without(payload: unknown, path: string): unknown {
      const copy = JSON.parse(JSON.stringify(payload)) as Record<string, unknown>
      const keys = path.split('.')
      let at = copy
      for (const k of keys.slice(0, -1)) at = at[k] as Record<string, unknown>
      delete at[keys[keys.length - 1] as string]
      return copy
    }
    /** [format, a valid payload, the fields the doc says it requires] */
    const REQUIRED: readonly (readonly [string, Record<string, unknown>, readonly string[]])[] = [
      [
        'openai-responses',
        {
          type: 'message',
          role: 'assistant',
          content: [
            { type: 'output_text', text: 'x' },
            { type: 'refusal', refusal: 'no' },
          ],
        },
        ['role', 'content', 'content.0.text', 'content.1.refusal'],
      ],
      ['openai-responses', { type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' }, ['call_id', 'name', 'arguments']],
      ['openai-responses', { type: 'function_call_output', call_id: 'c', output: 'x' }, ['output']],
      ['openai-responses', { type: 'custom_tool_call', call_id: 'c', name: 'f', input: 'x' }, ['call_id', 'name', 'input']],
      ['openai-responses', { type: 'custom_tool_call_output', call_id: 'c', output: 'x' }, ['call_id', 'output']],
      [
        'openai-responses',
        { type: 'computer_call', id: 'cu', call_id: 'c', status: 'completed', pending_safety_checks: [] },
        ['id', 'call_id', 'status', 'pending_safety_checks'],
      ],
      [
        'openai-responses',
        { type: 'computer_call_output', call_id: 'c', output: { type: 'computer_screenshot' } },
        ['call_id', 'output', 'output.type'],
      ],
      [
        'openai-responses',
        { type: 'local_shell_call', id: 'l', call_id: 'c', status: 'completed', action: { type: 'exec' } },
        ['id', 'call_id', 'status', 'action'],
      ],
      ['openai-responses', { type: 'local_shell_call_output', id: 'c', output: 'x' }, ['id', 'output']],
      ['openai-responses', { type: 'shell_call', call_id: 'c', action: { commands: ['ls'] } }, ['call_id', 'action.commands']],
      [
        'openai-responses',
        { type: 'shell_call_output', call_id: 'c', output: [{ stdout: '', stderr: '' }] },
        ['call_id', 'output', 'output.0.stdout', 'output.0.stderr'],
      ],
      [
        'openai-responses',
        { type: 'apply_patch_call', call_id: 'c', status: 'completed', operation: { type: 'create_file', path: 'a' } },
        ['call_id', 'status', 'operation.type', 'operation.path'],
      ],
      ['openai-responses', { type: 'apply_patch_call_output', call_id: 'c', status: 'completed' }, ['call_id', 'status']],
      [
        'openai-responses',
        { type: 'mcp_approval_request', id: 'r', name: 'f', arguments: '{}', server_label: 's' },
        ['id', 'name', 'arguments', 'server_label'],
      ],
      ['openai-responses', { type: 'mcp_approval_response', approval_request_id: 'r', approve: true }, ['approval_request_id', 'approve']],
      ['openai-responses', { type: 'tool_search_output', call_id: 'c', tools: [] }, ['tools']],
      ['openai-responses', { type: 'reasoning', id: 'rs', summary: [] }, ['id', 'summary']],
      ['openai-responses', { type: 'compaction', encrypted_content: 'e' }, ['encrypted_content']],
      ['openai-responses', { type: 'file_search_call', id: 'fs', status: 'completed', queries: [] }, ['id', 'status', 'queries']],
      ['openai-responses', { type: 'web_search_call', id: 'ws', status: 'completed' }, ['id', 'status']],
      [
        'openai-responses',
        { type: 'code_interpreter_call', id: 'ci', status: 'completed', code: null, container_id: 'k' },
        ['id', 'status', 'code', 'container_id'],
      ],
      ['openai-responses', { type: 'image_generation_call', id: 'ig', status: 'completed', result: null }, ['id', 'status', 'result']],
      [
        'openai-responses',
        { type: 'mcp_call', id: 'm', name: 'f', arguments: '{}', server_label: 's' },
        ['id', 'name', 'arguments', 'server_label'],
      ],
      ['openai-responses', { type: 'mcp_list_tools', id: 'm', server_label: 's', tools: [] }, ['id', 'server_label', 'tools']],
      ['openai-responses', { type: 'item_reference', id: 'msg_1' }, ['id']],
      [
        'openai-agents',
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'x' },
            { type: 'audio', audio: 'a' },
          ],
        },
        ['content', 'content.0.text', 'content.1.audio'],
      ],
      ['openai-agents', { role: 'system', content: 'x' }, ['content']],
      [
        'openai-agents',
        {
          role: 'assistant',
          status: 'completed',
          content: [
            { type: 'output_text', text: 'x' },
            { type: 'refusal', refusal: 'n' },
            { type: 'image', image: 'i' },
          ],
        },
        ['status', 'content', 'content.0.text', 'content.1.refusal', 'content.2.image'],
      ],
      ['openai-agents', { type: 'function_call', callId: 'c', name: 'f', arguments: '{}' }, ['callId', 'name', 'arguments']],
      [
        'openai-agents',
        { type: 'function_call_result', callId: 'c', name: 'f', status: 'completed', output: 'x' },
        ['callId', 'name', 'status', 'output'],
      ],
      [
        'openai-agents',
        { type: 'computer_call', callId: 'c', status: 'completed', action: { type: 'click' } },
        ['callId', 'status', 'action'],
      ],
      [
        'openai-agents',
        { type: 'computer_call_result', callId: 'c', output: { type: 'computer_screenshot', data: '' } },
        ['callId', 'output', 'output.type', 'output.data'],
      ],
      ['openai-agents', { type: 'shell_call', callId: 'c', action: { commands: [] } }, ['callId', 'action.commands']],
      [
        'openai-agents',
        { type: 'shell_call_output', callId: 'c', output: [{ stdout: '', stderr: '', outcome: { type: 'exit' } }] },
        ['callId', 'output', 'output.0.stdout', 'output.0.stderr', 'output.0.outcome'],
      ],
      [
        'openai-agents',
        { type: 'apply_patch_call', callId: 'c', status: 'completed', operation: { type: 'create_file', path: 'a' } },
        ['callId', 'status', 'operation.type', 'operation.path'],
      ],
      ['openai-agents', { type: 'apply_patch_call_output', callId: 'c', status: 'completed' }, ['callId', 'status']],
      ['openai-agents', { type: 'hosted_tool_call', name: 'web' }, ['name']],
      ['openai-agents', { type: 'tool_search_output', callId: 'c', tools: [] }, ['tools']],
      ['openai-agents', { type: 'program', callId: 'c', code: 'x', fingerprint: 'f' }, ['callId', 'code', 'fingerprint']],
      ['openai-agents', { type: 'program_output', callId: 'c', output: 'x', status: 'completed' }, ['callId', 'output', 'status']],
      ['openai-agents', { type: 'reasoning', content: [{ type: 'input_text', text: 'x' }] }, ['content', 'content.0.text']],
      ['openai-agents', { type: 'compaction', encrypted_content: 'e' }, ['encrypted_content']],
      [
        'anthropic',
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image', source: { type: 'url' } },
            { type: 'document', source: { type: 'url' } },
            { type: 'container_upload', file_id: 'f' },
            { type: 'tool_reference', tool_name: 't' },
          ],
        },
        [
          'role',
          'content',
          'content.0.text',
          'content.1.source',
          'content.1.source.type',
          'content.2.source.type',
          'content.3.file_id',
          'content.4.tool_name',
        ],
      ],
      [
        'anthropic',
        { role: 'user', content: [{ type: 'search_result', source: 's', title: 't', content: [{ type: 'text', text: 'x' }] }] },
        ['content.0.source', 'content.0.title', 'content.0.content', 'content.0.content.0.text'],
      ],
      [
        'anthropic',
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'text', text: 'x' }] }] },
        ['content.0.tool_use_id', 'content.0.content.0.text', 'content.0.content.0.type'],
      ],
      [
        'anthropic',
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'x', signature: 's' },
            { type: 'redacted_thinking', data: 'd' },
            { type: 'tool_use', id: 't', name: 'f', input: {} },
            { type: 'server_tool_use', id: 's', name: 'web_search', input: {} },
          ],
        },
        [
          'content.0.thinking',
          'content.0.signature',
          'content.1.data',
          'content.2.id',
          'content.2.name',
          'content.2.input',
          'content.3.id',
          'content.3.name',
          'content.3.input',
        ],
      ],
      ...[
        'web_search_tool_result',
        'web_fetch_tool_result',
        'code_execution_tool_result',
        'bash_code_execution_tool_result',
        'text_editor_code_execution_tool_result',
        'tool_search_tool_result',
      ].map(
        (type) =>
          [
            'anthropic',
            { role: 'assistant', content: [{ type, tool_use_id: 's', content: {} }] },
            ['content.0.tool_use_id', 'content.0.content'],
          ] as const,
      ),
      [
        'ai-sdk-ui',
        {
          id: 'u',
          role: 'assistant',
          parts: [
            { type: 'text', text: 'x' },
            { type: 'reasoning', text: 'x' },
            { type: 'source-url', sourceId: 's', url: 'u' },
            { type: 'source-document', sourceId: 's', mediaType: 'm', title: 't' },
            { type: 'file', mediaType: 'm', url: 'u' },
            { type: 'data-x', data: 1 },
          ],
        },
        [
          'id',
          'role',
          'parts',
          'parts.0.text',
          'parts.1.text',
          'parts.2.sourceId',
          'parts.2.url',
          'parts.3.sourceId',
          'parts.3.mediaType',
          'parts.3.title',
          'parts.4.mediaType',
          'parts.4.url',
          'parts.5.data',
        ],
      ],
      [
        'ai-sdk-ui',
        {
          id: 'u',
          role: 'assistant',
          parts: [
            { type: 'dynamic-tool', toolName: 'f', toolCallId: 'c', state: 'output-error', input: {}, errorText: 'e' },
            { type: 'tool-g', toolCallId: 'd', state: 'approval-responded', input: {}, approval: { id: 'a', approved: true } },
          ],
        },
        [
          'parts.0.toolName',
          'parts.0.toolCallId',
          'parts.0.state',
          'parts.0.errorText',
          'parts.1.approval',
          'parts.1.approval.id',
          'parts.1.approval.approved',
        ],
      ],
      [
        'ai-sdk-model',
        {
          role: 'user',
          content: [
            { type: 'text', text: 'x' },
            { type: 'image', image: 'i' },
            { type: 'file', data: 'd', mediaType: 'm' },
          ],
        },
        ['role', 'content', 'content.0.text', 'content.1.image', 'content.2.data', 'content.2.mediaType'],
      ],
      [
        'ai-sdk-model',
        {
          role: 'assistant',
          content: [
            { type: 'reasoning', text: 'x' },
            { type: 'tool-call', toolCallId: 'c', toolName: 'f', input: {} },
            { type: 'tool-approval-request', approvalId: 'a', toolCallId: 'c' },
          ],
        },
        ['content.0.text', 'content.1.toolCallId', 'content.1.toolName', 'content.2.approvalId', 'content.2.toolCallId'],
      ],
      [
        'ai-sdk-model',
        {
          role: 'tool',
          content: [
            { type: 'tool-result', toolCallId: 'c', toolName: 'f', output: { type: 'text', value: 'x' } },
            { type: 'tool-approval-response', approvalId: 'a', approved: true },
          ],
        },
        [
          'content.0.toolCallId',
          'content.0.toolName',
          'content.0.output',
          'content.0.output.type',
          'content.0.output.value',
          'content.1.approvalId',
          'content.1.approved',
        ],
      ],
      ...(['json', 'error-json'] as const).map(
        (type) =>
          [
            'ai-sdk-model',
            { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 'f', output: { type, value: {} } }] },
            ['content.0.output.value'],
          ] as const,
      ),
    ]
    for (const [format, payload, fields] of REQUIRED) {
      const kind = String(payload['type'] ?? payload['role'])
      it(`${format} ${kind}: a payload without ${fields.join(', ')} is INVALID_MESSAGE at that path, details.format ${format}`, () => {
        // given a valid payload
        expect(() => parseFormatPayload(payload, format)).not.toThrow()
        for (const field of fields) {
          // when one required field is missing
          const error = thrown(() => parseFormatPayload(without(payload, field), format))

          // then it is refused, at that field
          expect([field, error.code, error.details['format']]).toEqual([field, 'INVALID_MESSAGE', format])
          const paths = (error.details['issues'] as { path: unknown[] }[]).map((i) => i.path.map(String).join('.'))
          expect([field, paths]).toEqual([field, expect.arrayContaining([field])])
        }
      })
    }

    it('tool_search_call / tool_search_output: execution is server or client when present, in both OpenAI item formats', () => {
      for (const [format, idKey] of [
        ['openai-responses', 'call_id'],
        ['openai-agents', 'callId'],
      ] as const) {
        for (const type of ['tool_search_call', 'tool_search_output']) {
          const item = { type, [idKey]: 'c', arguments: {}, tools: [] }
          expect(() => parseFormatPayload(item, format)).not.toThrow()
          for (const execution of ['server', 'client']) expect(() => parseFormatPayload({ ...item, execution }, format)).not.toThrow()
          expect(thrown(() => parseFormatPayload({ ...item, execution: 'elsewhere' }, format))).toMatchObject({
            code: 'INVALID_MESSAGE',
            details: { format, issues: [{ path: ['execution'] }] },
          })
        }
      }
    })

    it('a tool_search_call whose execution is not server, absent included, opens its call (both OpenAI item formats)', () => {
      const responses = message({ type: 'tool_search_call', call_id: 'ts_1', arguments: {} }, 'openai-responses')
      const agents = message({ type: 'tool_search_call', callId: 'ts_2', arguments: {} }, 'openai-agents')
      expect(toolPairing([responses, agents]).unanswered).toEqual([
        { messageId: responses.id, toolCallId: 'ts_1' },
        { messageId: agents.id, toolCallId: 'ts_2' },
      ])
    })

    it('openai-agents computer_call: action or actions (one of them) is required', () => {
      const base = { type: 'computer_call', callId: 'c', status: 'completed' }
      expect(() => parseFormatPayload({ ...base, actions: [{ type: 'click' }] }, 'openai-agents')).not.toThrow()
      expect(() => parseFormatPayload({ ...base, action: { type: 'click' } }, 'openai-agents')).not.toThrow()
      expect(thrown(() => parseFormatPayload(base, 'openai-agents')).code).toBe('INVALID_MESSAGE')
    })

    it('openai-responses hosted calls: only id, status and the fields the format names are required (an older web_search_call without action and a code_interpreter_call without outputs are kept)', () => {
      for (const item of [
        { type: 'web_search_call', id: 'ws', status: 'completed' },
        { type: 'code_interpreter_call', id: 'ci', status: 'completed', code: null, container_id: 'k' },
        { type: 'mcp_call', id: 'm', name: 'f', arguments: '{}', server_label: 's' },
      ])
        expect(parseFormatPayload(item, 'openai-responses')).toEqual(item)
    })
  })
})
