/**
 * Message formats: the registry, the built-ins (`openai-chat`, `json`), `meta`, and a format written
 * the way a new one is (one object, registered): its pairing is found and repaired in its own shape.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import {
  contentHash,
  createMessage,
  isTurnlogError,
  messageFormat,
  messageFormatNames,
  parseMessage,
  readingFormat,
  registerMessageFormat,
  serializeMessage,
  toMessage,
  toWire,
  toolPairing,
  withStatus,
  type Message,
  type MessageFormat,
} from '@turnlog/core'
import { formatPayloadArb, jsonPayloadArb, metaArb } from '@turnlog/testing'
import { z } from 'zod'

const RUNS = { numRuns: 200 }

/** A Responses-like item format, written as a new format would be: calls and outputs are items. */
type Item =
  | { readonly type: 'message'; readonly role: string; readonly content: string }
  | { readonly type: 'function_call'; readonly call_id: string; readonly name: string; readonly arguments: string }
  | { readonly type: 'function_call_output'; readonly call_id: string; readonly output: string }

const itemsFormat: MessageFormat<Item> = {
  name: 'test-items',
  schema: z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('message'), role: z.string(), content: z.string() }),
    z.looseObject({ type: z.literal('function_call'), call_id: z.string().min(1), name: z.string(), arguments: z.string() }),
    z.looseObject({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: z.string() }),
  ]),
  toolCalls: (p) => (p.type === 'function_call' ? [p.call_id] : []),
  toolResults: (p) => (p.type === 'function_call_output' ? [p.call_id] : []),
  interruptedResults: (ids, content) => ids.map((call_id) => ({ type: 'function_call_output', call_id, output: content })),
  toWire: (p) => JSON.parse(JSON.stringify(p)) as unknown,
  preview: (p) => ({
    role: p.type === 'message' ? p.role : 'tool',
    kind: p.type,
    text: p.type === 'message' ? p.content : p.type === 'function_call_output' ? p.output : p.name,
  }),
}
registerMessageFormat(itemsFormat)

const item = (payload: Item): Message<Item> => createMessage(payload, { format: 'test-items' })

describe('the format registry', () => {
  it('lists the built-ins first; a taken name, a bad name or a format without its functions is refused', () => {
    expect(messageFormatNames().slice(0, 2)).toEqual(['openai-chat', 'json'])
    expect(messageFormatNames()).toContain('test-items')
    for (const bad of [itemsFormat, { ...itemsFormat, name: 'Bad Name' }, { ...itemsFormat, name: 'other', preview: undefined }, null]) {
      let code: string | undefined
      try {
        registerMessageFormat(bad as never)
      } catch (error) {
        code = isTurnlogError(error) ? error.code : String(error)
      }
      expect(code).toBe('INVALID_INPUT')
    }
  })

  it('an unknown format is INVALID_MESSAGE when creating; a stored one is read opaquely under its name', () => {
    expect(() => createMessage({ a: 1 }, { format: 'nope' })).toThrow(expect.objectContaining({ code: 'INVALID_MESSAGE' }) as never)
    expect(() => messageFormat('nope')).toThrow(expect.objectContaining({ code: 'INVALID_MESSAGE' }) as never)
    expect(readingFormat('nope').name).toBe('nope')
    expect(readingFormat('nope').toolCalls({ role: 'assistant', tool_calls: [{ id: 'x' }] })).toEqual([])
    expect(readingFormat(undefined).name).toBe('openai-chat')
  })

  it('a payload without a chat role is refused by default and kept as json; a non-object is refused as json', () => {
    expect(() => createMessage({ kind: 'x' } as never)).toThrow(expect.objectContaining({ code: 'INVALID_MESSAGE' }) as never)
    expect(createMessage({ kind: 'x' }, { format: 'json' }).format).toBe('json')
    for (const bad of ['hello', [1], null, 3])
      expect(() => createMessage(bad as never, { format: 'json' })).toThrow(expect.objectContaining({ code: 'INVALID_MESSAGE' }) as never)
  })
})

describe('formats and meta (properties)', () => {
  it('every format round-trips exactly through serialize/parse and toWire (NUL, lone surrogates, unknown fields), format and meta kept', () => {
    fc.assert(
      fc.property(formatPayloadArb, fc.option(metaArb, { nil: undefined }), ({ format, payload }, meta) => {
        // when
        const m = createMessage(payload, { format, ...(meta === undefined ? {} : { meta }) })
        const back = parseMessage<unknown>(serializeMessage(m))
        const rebuilt = toMessage<unknown>(JSON.parse(JSON.stringify(m)))

        // then
        for (const copy of [back, rebuilt, withStatus(m, 'partial')]) {
          expect(copy.format).toBe(format)
          expect(copy.meta).toEqual(m.meta)
          expect(JSON.stringify(copy.payload)).toBe(JSON.stringify(m.payload))
          expect(contentHash(copy)).toBe(contentHash(m))
        }
        expect(JSON.stringify(toWire([m]))).toBe(JSON.stringify([m.payload]))
      }),
      RUNS,
    )
  })

  it('meta is not content: never on the wire, not in the content hash; the hash of a chat message is the hash of its payload', () => {
    fc.assert(
      fc.property(jsonPayloadArb, metaArb, (payload, meta) => {
        const plain = createMessage(payload, { format: 'json' })
        const withMeta = createMessage(payload, { format: 'json', meta })
        expect(contentHash(withMeta)).toBe(contentHash(plain))
        expect(toWire([withMeta])).toEqual(toWire([plain]))
      }),
      RUNS,
    )
    const chat = createMessage({ role: 'user', content: 'hi' }, { meta: { model: 'm' } })
    // the golden hash of this payload before formats existed
    expect(contentHash(chat)).toBe(contentHash({ role: 'user', content: 'hi' }))
  })

  it('a json message opens and answers no call, so it is never an unanswered call or an orphan', () => {
    fc.assert(
      fc.property(fc.array(jsonPayloadArb, { maxLength: 6 }), (payloads) => {
        const messages = payloads.map((p) => createMessage(p, { format: 'json' }))
        expect(toolPairing(messages)).toEqual({
          ok: true,
          unanswered: [],
          orphans: [],
          duplicates: [],
          duplicateCalls: [],
          reusedCalls: [],
        })
        expect(toWire(messages, { repairPairing: true })).toEqual(toWire(messages))
      }),
      RUNS,
    )
  })
})

describe('a format added on the seam (test-items)', () => {
  const CALLS = ['c1', 'c2', 'c3']
  const listArb = fc.array(
    fc.oneof(
      fc.constantFrom(...CALLS).map((id) => item({ type: 'function_call', call_id: id, name: 'f', arguments: '{}' })),
      fc.constantFrom(...CALLS).map((id) => item({ type: 'function_call_output', call_id: id, output: `out ${id}` })),
      fc.constant(null).map(() => item({ type: 'message', role: 'user', content: 'hi' })),
    ),
    { maxLength: 10 },
  )

  it("unanswered calls, orphans and duplicates are found, and repairPairing fixes them in the format's own shape", () => {
    fc.assert(
      fc.property(listArb, (messages) => {
        // when
        const before = toolPairing(messages)
        const repaired = toWire(messages, { repairPairing: true, interruptedContent: 'INTERRUPTED' })
        const again = toolPairing(repaired.map((payload, i) => ({ id: `w${i}` as never, payload, format: 'test-items' })))

        // then
        // (this format has no renameToolIds: an id reused after its result is sent as it is, and pairs in order)
        expect(again).toEqual({
          ok: before.reusedCalls.length === 0,
          unanswered: [],
          orphans: [],
          duplicates: [],
          duplicateCalls: [],
          reusedCalls: again.reusedCalls,
        })
        expect(again.reusedCalls.map((r) => r.toolCallId)).toEqual(before.reusedCalls.map((r) => r.toolCallId))
        const synthetic = repaired.filter(
          (p): p is Extract<Item, { type: 'function_call_output' }> => p.type === 'function_call_output' && p.output === 'INTERRUPTED',
        )
        expect(synthetic.map((p) => p.call_id).sort()).toEqual(before.unanswered.map((u) => u.toolCallId).sort())
      }),
      RUNS,
    )
  })

  it('an unanswered call gets its interrupted output right after its block of outputs (here empty: the next item is a call)', () => {
    const call = item({ type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' })
    const call2 = item({ type: 'function_call', call_id: 'c2', name: 'g', arguments: '{}' })
    const out2 = item({ type: 'function_call_output', call_id: 'c2', output: 'ok' })
    const next = item({ type: 'message', role: 'user', content: 'next' })
    expect(toolPairing([call, call2, out2, next]).unanswered).toEqual([{ messageId: call.id, toolCallId: 'c1' }])
    expect(toWire([call, call2, out2, next], { repairPairing: true, interruptedContent: 'X' })).toEqual([
      call.payload,
      { type: 'function_call_output', call_id: 'c1', output: 'X' },
      call2.payload,
      out2.payload,
      next.payload,
    ])
  })

  it('calls and results pair across formats by id (a session may mix formats)', () => {
    const chatCall = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'x1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    })
    const itemOutput = item({ type: 'function_call_output', call_id: 'x1', output: 'done' })
    expect(toolPairing([chatCall, itemOutput] as Message<unknown>[]).ok).toBe(true)
  })

  it('previews come from the format', () => {
    expect(readingFormat('test-items').preview({ type: 'message', role: 'user', content: 'hi' })).toEqual({
      role: 'user',
      kind: 'message',
      text: 'hi',
    })
    expect(readingFormat('openai-chat').preview({ role: 'tool', tool_call_id: 'a', content: 'r' })).toEqual({
      role: 'tool',
      kind: 'tool_result',
      text: 'r',
    })
    expect(readingFormat('json').preview({ a: 1 })).toEqual({ role: 'json', kind: 'json', text: '{"a":1}' })
  })
})
