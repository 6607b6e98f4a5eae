import { describe, expect, it } from '@jest/globals'
import { AI_SDK_MODEL_FORMAT } from '../../src/formats/ai-sdk-model-format.js'
import { AI_SDK_UI_FORMAT } from '../../src/formats/ai-sdk-ui-format.js'
import { ANTHROPIC_FORMAT } from '../../src/formats/anthropic-format.js'
import { JSON_FORMAT } from '../../src/formats/json-format.js'
import { OPENAI_AGENTS_FORMAT } from '../../src/formats/openai-agents-format.js'
import { OPENAI_CHAT_FORMAT } from '../../src/formats/openai-chat-format.js'
import { OPENAI_RESPONSES_FORMAT } from '../../src/formats/openai-responses-format.js'
import {
  PLACEHOLDER_KEPT_KEYS,
  REDACTED_CONTENT,
  isRedactedPayload,
  isTurnlogError,
  messageFormat,
  parseFormatPayload,
  readingFormat,
  redactedPayload,
  registerMessageFormat,
} from '../../src/index.js'
import * as aiSdkModel from './ai-sdk-model-fixtures.js'
import * as aiSdkUi from './ai-sdk-ui-fixtures.js'
import { VALID_FIXTURES as ANTHROPIC_FIXTURES } from './anthropic-fixtures.js'
import { AGENTS_FIXTURES } from './openai-agents-fixtures.js'
import { RESPONSES_FIXTURES } from './openai-responses-fixtures.js'

const CASES: readonly (readonly [string, readonly unknown[]])[] = [
  [OPENAI_RESPONSES_FORMAT, Object.values(RESPONSES_FIXTURES)],
  [OPENAI_AGENTS_FORMAT, Object.values(AGENTS_FIXTURES)],
  [ANTHROPIC_FORMAT, Object.values(ANTHROPIC_FIXTURES)],
  [AI_SDK_UI_FORMAT, aiSdkUi.ALL_VALID],
  [AI_SDK_MODEL_FORMAT, aiSdkModel.ALL_VALID],
]

/** Every string of `value` that is not under a kept key (the content a placeholder must drop). */
function contentStrings(value: unknown, key?: string): string[] {
  if (typeof value === 'string') return key !== undefined && PLACEHOLDER_KEPT_KEYS.has(key) ? [] : [value]
  if (Array.isArray(value)) return value.flatMap((v) => contentStrings(v))
  if (typeof value === 'object' && value !== null) return Object.entries(value).flatMap(([k, v]) => contentStrings(v, k))
  return []
}

describe('redaction placeholders of every format', () => {
  for (const [name, fixtures] of CASES) {
    it(`${name}: valid payloads of the format that keep the pairing ids and drop the content`, () => {
      const format = messageFormat(name)
      for (const fixture of fixtures) {
        const payload = parseFormatPayload(fixture, name)
        const placeholder = redactedPayload(payload, name)
        expect(isRedactedPayload(placeholder)).toBe(true)
        expect(isRedactedPayload(placeholder, name)).toBe(true)
        // the payload itself, content and all, is no placeholder of its format
        if (contentStrings(payload).some((s) => s !== REDACTED_CONTENT)) expect(isRedactedPayload(payload, name)).toBe(false)
        expect(() => parseFormatPayload(placeholder, name)).not.toThrow()
        const parsed = parseFormatPayload(placeholder, name)
        expect(format.toolCalls(parsed)).toEqual(format.toolCalls(payload))
        expect(format.toolResults(parsed)).toEqual(format.toolResults(payload))
        expect(redactedPayload(parsed, name)).toEqual(placeholder)
        for (const s of contentStrings(placeholder)) expect(s).toBe(REDACTED_CONTENT)
        expect(JSON.stringify(placeholder)).not.toContain('Paris')
      }
    })
  }

  it('json (and a format this process does not know): { redacted: true }', () => {
    expect(redactedPayload({ secret: 'x', name: 'Ada' }, JSON_FORMAT)).toEqual({ redacted: true })
    expect(redactedPayload('a bare string', JSON_FORMAT)).toEqual({ redacted: true })
    expect(redactedPayload({ secret: 'x' }, 'some-unregistered-format')).toEqual({ redacted: true })
    expect(isRedactedPayload({ redacted: true })).toBe(true)
  })

  it('openai-chat keeps its placeholder', () => {
    expect(redactedPayload({ role: 'tool', tool_call_id: 'c1', content: 'secret' })).toEqual({
      role: 'tool',
      content: REDACTED_CONTENT,
      tool_call_id: 'c1',
    })
    expect(redactedPayload({ role: 'tool', tool_call_id: 'c1', content: 'secret' }, 'openai-chat')).toEqual({
      role: 'tool',
      content: REDACTED_CONTENT,
      tool_call_id: 'c1',
    })
  })

  it('is format-aware: openai-chat accepts only the chat shape, every other format only a structural placeholder', () => {
    // given
    const chat = redactedPayload({
      role: 'assistant',
      content: 'x',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    })
    const others = [...CASES.map(([name]) => name), JSON_FORMAT, 'some-unregistered-format']

    // then: the chat placeholder (its arguments '{}' are no structural string) is openai-chat's alone
    expect(isRedactedPayload(chat, OPENAI_CHAT_FORMAT)).toBe(true)
    expect(others.map((f) => [f, isRedactedPayload(chat, f)])).toEqual(others.map((f) => [f, false]))
    // a structural placeholder is every other format's, never openai-chat's
    expect(isRedactedPayload({ redacted: true }, OPENAI_CHAT_FORMAT)).toBe(false)
    expect(others.map((f) => [f, isRedactedPayload({ redacted: true }, f)])).toEqual(others.map((f) => [f, true]))
    // an openai-chat payload with content is a placeholder of no format
    const content = { role: 'user', content: 'secret' }
    expect([OPENAI_CHAT_FORMAT, ...others].some((f) => isRedactedPayload(content, f))).toBe(false)
    // without a format: a placeholder of some format
    expect([isRedactedPayload(chat), isRedactedPayload({ redacted: true }), isRedactedPayload(content)]).toEqual([true, true, false])
  })

  it('openai-chat: a tool call whose id, call_id, type or function name is not a string is no placeholder (as turnlog.is_redaction_placeholder)', () => {
    // given the shapes an adversarial tester passed to turnlog.redact_message as a writer
    const call = (c: object) => ({ role: 'assistant', content: REDACTED_CONTENT, tool_calls: [c] })
    const hostile = [
      call({ id: { injected: 'ARBITRARY TEXT', more: [1, 2, { x: 'y' }] }, type: { also: 'content' } }),
      call({ id: 'c1', type: { also: 'content' } }),
      call({ call_id: ['content'] }),
      call({ id: 7 }),
      call({ id: 'c1', type: 'function', function: { name: { free: 'text' }, arguments: '{}' } }),
      call({ id: 'c1', type: 'function', function: { arguments: '{}' } }),
    ]

    // then none is a placeholder, of openai-chat or of no format named; the honest shape still is
    expect(hostile.map((p) => [isRedactedPayload(p, OPENAI_CHAT_FORMAT), isRedactedPayload(p)])).toEqual(hostile.map(() => [false, false]))
    expect(isRedactedPayload(call({ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }), OPENAI_CHAT_FORMAT)).toBe(true)
    // a null id holds no content: a structural placeholder (of some format), but not openai-chat's shape
    expect([isRedactedPayload(call({ id: null }), OPENAI_CHAT_FORMAT), isRedactedPayload(call({ id: null }))]).toEqual([false, true])
  })

  it("refuses a format's redactedPayload hook that makes the chat placeholder shape (the database would refuse it)", () => {
    // given: a format (json's schema and functions) whose hook makes openai-chat's shape
    registerMessageFormat({
      ...readingFormat(JSON_FORMAT),
      name: 'test-chat-shaped-redaction',
      redactedPayload: () => ({
        role: 'assistant',
        content: REDACTED_CONTENT,
        tool_calls: [{ id: 'c1', function: { name: 'f', arguments: '{}' } }],
      }),
    })

    // when
    let error: unknown
    try {
      redactedPayload({ secret: 'x' }, 'test-chat-shaped-redaction')
    } catch (e) {
      error = e
    }

    // then
    expect(isTurnlogError(error, 'INVALID_INPUT')).toBe(true)
    expect((error as Error).message).toContain('made no redaction placeholder')
  })

  it('a format that is not a name is INVALID_INPUT; any payload is an answer, never an error', () => {
    let error: unknown
    try {
      isRedactedPayload({ redacted: true }, 42 as never)
    } catch (e) {
      error = e
    }
    expect(isTurnlogError(error, 'INVALID_INPUT')).toBe(true)
    const revoked = Proxy.revocable({}, {})
    revoked.revoke()
    expect([isRedactedPayload(revoked.proxy, OPENAI_CHAT_FORMAT), isRedactedPayload(revoked.proxy, JSON_FORMAT)]).toEqual([false, false])
  })

  it('content in a structural placeholder is not a placeholder', () => {
    expect(isRedactedPayload({ type: 'message', content: 'secret' })).toBe(false)
    expect(isRedactedPayload({ type: 'x', parts: [{ text: 'secret' }] })).toBe(false)
    expect(isRedactedPayload({ type: 'x', n: 42 })).toBe(false)
    expect(isRedactedPayload([REDACTED_CONTENT])).toBe(false)
    expect(isRedactedPayload({ type: 'x', parts: [{ text: REDACTED_CONTENT, n: 0, ok: true, v: null }] })).toBe(true)
  })
})
