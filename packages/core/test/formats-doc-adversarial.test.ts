/**
 * docs/formats.md and docs/architecture.md ("Messages", "Write path" 1), attacked with hostile values:
 * the pure promises (no database; the store's are in packages/postgres/test/formats-doc-adversarial.int.test.ts).
 *
 * - copies of a message are the message: a spread, a frozen spread, a JSON round trip and a structured
 *   clone keep id, format, meta and content hash, and `toWire` sends them once; a spread with an edited
 *   payload is a second content (formats.md "toWire", architecture.md rule "copies are the same message");
 * - `tool_calls` null, `[]` and absent: three payloads (stored as given: three hashes), one wire copy;
 *   the `json` format sends the null as stored ("Types", "Storage and hashing");
 * - `call_id` where OpenAI wants `id` / `tool_call_id`: pairs like them, one call opened by `id` and
 *   by `call_id` in one message is a duplicate call sent once, the interrupted result is the format's
 *   own (`tool_call_id`) (the format table, "interruptedResults");
 * - a reused call id holding NUL, a lone surrogate, an astral and an RTL character: `<id>_<n>`, more `_`
 *   while the list calls that id, the characters intact ("renameToolIds");
 * - pairing across formats (chat calls, Anthropic results): a reused hostile id renamed in both, a
 *   duplicate result left out of its turn with the turn's text kept ("whatever the formats");
 * - image_url / input_audio / unknown parts, reasoning fields, unknown provider fields, nulls: on the
 *   wire as stored, with `repairPairing` too; the preview names a part without text by its type;
 * - the payload is a deeply frozen JSON copy: a frozen input is copied, a getter is read once, later
 *   changes to the input or to a wire copy change nothing ("schema", "toWire(payload)");
 * - openai-responses: `{ type: null, id }` is an item reference (the SDK's type allows the null),
 *   `{ type: null, role, content }` is refused at `type` (the doc said every non-string type was refused);
 * - a value whose getters throw, or a revoked Proxy, anywhere a payload, meta, a message copy or an
 *   option is read: `INVALID_INPUT` (docs/errors.md), never a raw error; for a payload `details.field`
 *   is `payload`, the argument at fault (regression: it named an internal function, `toFrozenJson`).
 */
import { describe, expect, it } from '@jest/globals'
import {
  INTERRUPTED_TOOL_RESULT,
  contentHash,
  createMessage,
  isMessage,
  isTurnlogError,
  parseChatMessage,
  parseFormatPayload,
  readingFormat,
  toMessage,
  toWire,
  toolPairing,
  type Message,
} from '../src/index.js'
import { HOSTILE_TEXT, sameRealmClone } from '@turnlog/testing'

const fn = { name: 'read_file', arguments: '{"path":"README.md"}' }

/** The code and details of the error `f` throws (fails when it throws none, or something else than a TurnlogError). */
function thrown(f: () => unknown): { code: string; field: unknown } {
  try {
    f()
  } catch (e) {
    if (isTurnlogError(e)) return { code: e.code, field: (e.details as { field?: unknown } | undefined)?.field }
    throw new Error(`expected a TurnlogError, got ${String(e)}`, { cause: e })
  }
  throw new Error('expected a TurnlogError, none was thrown')
}

/** The code, format and issue paths of the INVALID_MESSAGE `f` throws. */
function thrownIssues(f: () => unknown): { code: string; format: unknown; paths: unknown } {
  try {
    f()
  } catch (e) {
    if (!isTurnlogError(e)) throw e
    const details = e.details as { format?: unknown; issues?: readonly { path: unknown }[] } | undefined
    return { code: e.code, format: details?.format, paths: details?.issues?.map((i) => i.path) }
  }
  throw new Error('expected a TurnlogError, none was thrown')
}

describe('docs/formats.md, attacked: copies of a message', () => {
  it('a spread, a frozen spread, a JSON round trip and a structured clone keep id, format, meta and content hash, and toWire sends them once', () => {
    // given a message with hostile text, provider extras and meta, and every copy a runtime makes of it
    const m = createMessage(
      { role: 'assistant', content: HOSTILE_TEXT, reasoning_content: '\udfff', provider_specific_fields: { a: [null, {}] } },
      { meta: { model: 'm\u{1F600}\u202e', usage: { total: 3 } } },
    )
    const copies: unknown[] = [{ ...m }, Object.freeze({ ...m }), JSON.parse(JSON.stringify(m)), sameRealmClone(m)]

    // when each copy is taken back, and sent beside the original
    const rebuilt = copies.map((c) => toMessage(c))
    const wire = toWire([m, ...(copies as Message[])])

    // then every copy is the message: a new trusted value, same id, format, meta and content
    for (const [i, r] of rebuilt.entries()) {
      expect(isMessage(copies[i])).toBe(false)
      expect(r).not.toBe(copies[i])
      expect([r.id, r.format, r.meta, contentHash(r)]).toEqual([m.id, 'openai-chat', m.meta, contentHash(m)])
      expect(JSON.stringify(r.payload)).toBe(JSON.stringify(m.payload))
      expect(Object.isFrozen(r.payload)).toBe(true)
    }
    // and the copies are sent once, at the first one's place, without any envelope field
    expect(wire).toEqual([m.payload])
    expect(JSON.stringify(wire)).not.toContain(m.id)
    expect(JSON.stringify(wire)).not.toContain('usage')
  })

  it('a spread with an edited payload (an edit in place) is a second content under the id: both are sent, the hashes differ', () => {
    // given
    const m = createMessage({ role: 'tool', tool_call_id: 'call_1', content: 'ok' })
    const edited = { ...m, payload: { ...m.payload, content: 'ok (note appended)' } }

    // when
    const wire = toWire([m, edited as Message])

    // then
    expect(wire.map((w) => w.content)).toEqual(['ok', 'ok (note appended)'])
    expect(contentHash(edited as Message)).not.toBe(contentHash(m))
    expect(toMessage(edited).id).toBe(m.id)
  })
})

describe('docs/formats.md, attacked: null, [] and absent', () => {
  it('tool_calls null, [] and absent are three payloads (three hashes, each stored as given) with one wire copy', () => {
    // given three replies that differ only in how they say "no calls"
    const asNull = createMessage({ role: 'assistant', content: 'hi', tool_calls: null })
    const asEmpty = createMessage({ role: 'assistant', content: 'hi', tool_calls: [] })
    const absent = createMessage({ role: 'assistant', content: 'hi' })

    // when
    const wires = [asNull, asEmpty, absent].map((m) => toWire([m], { repairPairing: true }))

    // then the payloads keep what was given, so their content hashes differ
    expect(asNull.payload).toEqual({ role: 'assistant', content: 'hi', tool_calls: null })
    expect(asEmpty.payload).toEqual({ role: 'assistant', content: 'hi', tool_calls: [] })
    expect(new Set([asNull, asEmpty, absent].map((m) => contentHash(m))).size).toBe(3)
    // and each is sent without tool_calls
    for (const w of wires) expect(w).toEqual([{ role: 'assistant', content: 'hi' }])
  })

  it('the json format sends a chat-shaped payload as stored, its tool_calls: null included (only openai-chat leaves it out)', () => {
    // given one payload text under both formats
    const payload = { role: 'assistant' as const, content: 'x', tool_calls: null, refusal: null }
    const chat = createMessage(payload)
    const json = createMessage<object>(payload, { format: 'json' })

    // when
    const [chatWire] = toWire([chat])
    const [jsonWire] = toWire([json])

    // then one hash, and the null differs on the wire only
    expect(contentHash(json)).toBe(contentHash(chat))
    expect(jsonWire).toEqual(payload)
    expect(chatWire).toEqual({ role: 'assistant', content: 'x', refusal: null })
  })
})

describe('docs/formats.md, attacked: call_id where OpenAI wants id / tool_call_id', () => {
  it('a call opened by call_id is answered by a tool call_id; unanswered, its interrupted result is the format’s own (tool_call_id)', () => {
    // given a provider that writes call_id on both sides, and a second call that is never answered
    const call = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [
        { call_id: HOSTILE_TEXT, type: 'function', function: fn },
        { call_id: 'call_2', type: 'function', function: fn },
      ],
    })
    const result = createMessage({ role: 'tool', call_id: HOSTILE_TEXT, content: 'done' })

    // when
    const pairing = toolPairing([call, result])
    const wire = toWire([call, result], { repairPairing: true })

    // then call_id pairs as id / tool_call_id do, and is sent as stored
    expect(pairing.unanswered).toEqual([{ messageId: call.id, toolCallId: 'call_2' }])
    expect(pairing.orphans).toEqual([])
    expect(wire).toEqual([call.payload, result.payload, { role: 'tool', tool_call_id: 'call_2', content: INTERRUPTED_TOOL_RESULT }])
  })

  it('one id opened by id and again by call_id in one message is a duplicate call: the second entry is left out, the one result pairs with the first', () => {
    // given
    const call = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: HOSTILE_TEXT, type: 'function', function: fn },
        { call_id: HOSTILE_TEXT, type: 'function', function: fn },
      ],
    })
    const result = createMessage({ role: 'tool', tool_call_id: HOSTILE_TEXT, content: 'done' })

    // when
    const pairing = toolPairing([call, result])
    const wire = toWire([call, result], { repairPairing: true })

    // then
    expect(pairing.duplicateCalls).toEqual([{ toolCallId: HOSTILE_TEXT, messageIds: [call.id, call.id] }])
    expect(pairing.unanswered).toEqual([])
    expect(pairing.duplicates).toEqual([])
    expect(wire).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: HOSTILE_TEXT, type: 'function', function: fn }] },
      result.payload,
    ])
  })

  it('a reused hostile id is renamed <id>_<n> with its characters intact, with more _ while the list calls <id>_2; the field pairing reads is renamed, and its twin holding the same id', () => {
    // given an id called, answered, called again; the list also calls `${id}_2` itself
    const first = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [
        { id: HOSTILE_TEXT, type: 'function', function: fn },
        { id: `${HOSTILE_TEXT}_2`, type: 'function', function: fn },
      ],
    })
    const r1 = createMessage({ role: 'tool', tool_call_id: HOSTILE_TEXT, content: 'r1' })
    const r2 = createMessage({ role: 'tool', tool_call_id: `${HOSTILE_TEXT}_2`, content: 'r2' })
    const again = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: HOSTILE_TEXT, call_id: HOSTILE_TEXT, type: 'function', function: fn }],
    })
    const r3 = createMessage({ role: 'tool', call_id: HOSTILE_TEXT, content: 'r3' })

    // when
    const list = [first, r1, r2, again, r3]
    const wire = toWire(list, { repairPairing: true })

    // then the second call of the id is sent as `${id}_2_` (`${id}_2` is taken), in the call (its id, and
    // its call_id, which holds the same id) and in its result (its call_id)
    expect(toolPairing(list).reusedCalls).toEqual([{ toolCallId: HOSTILE_TEXT, messageIds: [first.id, again.id] }])
    expect(wire.slice(0, 3)).toEqual([first.payload, r1.payload, r2.payload])
    expect(wire[3]).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: `${HOSTILE_TEXT}_2_`, call_id: `${HOSTILE_TEXT}_2_`, type: 'function', function: fn }],
    })
    expect(wire[4]).toEqual({ role: 'tool', call_id: `${HOSTILE_TEXT}_2_`, content: 'r3' })
    expect(toolPairing(wire.map((payload, i) => ({ id: `m${i}` as Message['id'], payload }))).ok).toBe(true)
  })
})

describe('docs/formats.md, attacked: pairing across formats', () => {
  it('a chat call answered by Anthropic tool_result blocks: a reused hostile id is renamed in both formats, a third result is left out of its turn (its text kept), the last call answered in chat', () => {
    // given chat calls of one id answered by Anthropic user turns carrying a result and text
    const call = (): Message =>
      createMessage({ role: 'assistant', content: null, tool_calls: [{ id: HOSTILE_TEXT, type: 'function', function: fn }] })
    const answer = (text: string): Message<object> =>
      createMessage<object>(
        {
          role: 'user',
          content: [
            { type: 'tool_result', tool_use_id: HOSTILE_TEXT, content: text },
            { type: 'text', text: 'next' },
          ],
        },
        { format: 'anthropic' },
      )
    const list = [call(), answer('r1'), call(), answer('r2'), answer('r3'), call()] as Message<unknown>[]

    // when
    const pairing = toolPairing(list)
    const wire = toWire(list, { repairPairing: true }) as unknown[]

    // then every call of the id is its own call, sent under its own id in the call and in its result
    expect(pairing.reusedCalls).toEqual([{ toolCallId: HOSTILE_TEXT, messageIds: [list[0]?.id, list[2]?.id, list[5]?.id] }])
    expect(pairing.duplicates).toEqual([{ toolCallId: HOSTILE_TEXT, messageIds: [list[3]?.id, list[4]?.id] }])
    const result = (id: string, text: string): object => ({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: id, content: text },
        { type: 'text', text: 'next' },
      ],
    })
    const sent = (id: string): object => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: fn }] })
    expect(wire).toEqual([
      sent(HOSTILE_TEXT),
      result(HOSTILE_TEXT, 'r1'),
      sent(`${HOSTILE_TEXT}_2`),
      result(`${HOSTILE_TEXT}_2`, 'r2'),
      { role: 'user', content: [{ type: 'text', text: 'next' }] },
      sent(`${HOSTILE_TEXT}_3`),
      { role: 'tool', tool_call_id: `${HOSTILE_TEXT}_3`, content: INTERRUPTED_TOOL_RESULT },
    ])
  })
})

describe('docs/formats.md, attacked: what is kept', () => {
  it('parts (image_url, input_audio, an unknown kind), reasoning fields, unknown provider fields and their nulls reach the wire as stored, with repairPairing too', () => {
    // given
    const user = createMessage({
      role: 'user',
      content: [
        { type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA', detail: 'high' } },
        { type: 'input_audio', input_audio: { data: '', format: 'wav' } },
        { type: 'x-new-part', payload: { '\u0000': [null, HOSTILE_TEXT] } },
        { type: 'text', text: HOSTILE_TEXT },
      ],
      name: 'alice',
    })
    const reply = createMessage({
      role: 'assistant',
      content: '',
      reasoning_content: '\ud83d',
      reasoning_details: [{ type: 'reasoning.encrypted', data: 'gAAA', id: null }],
      finish_reason: 'stop',
      annotations: [],
      audio: null,
      function_call: null,
    })

    // when
    const plain = toWire([user, reply])
    const repaired = toWire([user, reply], { repairPairing: true })

    // then
    expect(JSON.stringify(plain)).toBe(JSON.stringify([user.payload, reply.payload]))
    expect(JSON.stringify(repaired)).toBe(JSON.stringify(plain))
    // and the preview names a part without text by its type
    expect(readingFormat('openai-chat').preview(user.payload)).toEqual({
      role: 'user',
      kind: 'text',
      text: `[image_url] [input_audio] [x-new-part] ${HOSTILE_TEXT}`,
    })
  })

  it('the payload is a deeply frozen JSON copy: a frozen input is copied, a getter read once, later changes to the input or a wire copy change nothing', () => {
    // given a frozen input, and one whose getter answers differently on each read
    const frozen = Object.freeze({ role: 'user' as const, content: Object.freeze([Object.freeze({ type: 'text', text: 'a' })]) })
    let reads = 0
    const live = {
      role: 'user' as const,
      get content(): string {
        reads++
        return `read ${reads}`
      },
      extra: { list: [1, 2] },
    }

    // when
    const a = createMessage(frozen)
    const b = createMessage(live)
    live.extra.list.push(3)
    const [wire] = toWire([b])
    ;(wire as unknown as { extra: { list: number[] } }).extra.list.push(4)

    // then
    expect(a.payload).not.toBe(frozen)
    expect(a.payload).toEqual(frozen)
    expect(reads).toBe(1)
    expect(b.payload).toEqual({ role: 'user', content: 'read 1', extra: { list: [1, 2] } })
    expect(toWire([b])).toEqual([{ role: 'user', content: 'read 1', extra: { list: [1, 2] } }])
  })
})

describe('docs/formats.md, attacked: openai-responses type null', () => {
  it('{ type: null, id } is an item_reference (the SDK allows the null there); { type: null, role, content } is INVALID_MESSAGE at type', () => {
    // given
    const reference = createMessage<object>({ type: null, id: `msg_${HOSTILE_TEXT}` }, { format: 'openai-responses' })

    // when
    const refused = thrownIssues(() => createMessage<object>({ type: null, role: 'user', content: 'x' }, { format: 'openai-responses' }))

    // then the reference is read as one: it pairs nothing and is sent as stored
    expect(readingFormat('openai-responses').preview(reference.payload)).toMatchObject({ kind: 'item_reference' })
    expect(toolPairing([reference]).ok).toBe(true)
    expect(toWire([reference])).toEqual([{ type: null, id: `msg_${HOSTILE_TEXT}` }])
    expect(refused).toEqual({ code: 'INVALID_MESSAGE', format: 'openai-responses', paths: [['type']] })
  })
})

describe('docs/errors.md, attacked: a value that cannot be read is INVALID_INPUT', () => {
  const boom = (): never => {
    throw new Error('boom')
  }
  const revoked = (): object => {
    const p = Proxy.revocable({}, {})
    p.revoke()
    return p.proxy
  }
  const m = createMessage({ role: 'user', content: 'x' })

  it.each<[string, () => unknown]>([
    [
      'createMessage: a payload getter',
      () =>
        createMessage({
          role: 'user',
          get content(): string {
            return boom()
          },
        }),
    ],
    [
      'createMessage: a meta getter',
      () =>
        createMessage(
          { role: 'user', content: 'x' },
          {
            meta: {
              get k(): string {
                return boom()
              },
            },
          },
        ),
    ],
    ['createMessage: a revoked payload', () => createMessage(revoked() as Message['payload'])],
    [
      'toMessage: a copy whose meta getter throws',
      () =>
        toMessage({
          ...m,
          get meta(): object {
            return boom()
          },
        }),
    ],
    [
      'toWire: a copy whose payload getter throws',
      () =>
        toWire([
          {
            ...m,
            get payload(): never {
              return boom()
            },
          } as Message,
        ]),
    ],
    ['toWire: a revoked message', () => toWire([revoked() as Message])],
    [
      'toWire: an options getter',
      () =>
        toWire([m], {
          get repairPairing(): boolean {
            return boom()
          },
        }),
    ],
    [
      'contentHash: a payload getter',
      () =>
        contentHash({
          payload: {
            role: 'user',
            get content(): string {
              return boom()
            },
          },
        } as Message),
    ],
    [
      'toolPairing: a payload getter',
      () =>
        toolPairing([
          {
            id: m.id,
            payload: {
              role: 'tool',
              get tool_call_id(): string {
                return boom()
              },
            },
          },
        ]),
    ],
  ])('%s', (_name, call) => {
    // when / then
    expect(thrown(call).code).toBe('INVALID_INPUT')
  })

  it.each<[string, () => unknown]>([
    [
      'createMessage',
      () =>
        createMessage({
          role: 'user',
          get content(): string {
            return boom()
          },
        }),
    ],
    ['createMessage of a revoked Proxy', () => createMessage(revoked() as Message['payload'])],
    [
      'parseFormatPayload',
      () =>
        parseFormatPayload(
          {
            kind: 'note',
            get text(): string {
              return boom()
            },
          },
          'json',
        ),
    ],
    [
      'parseChatMessage',
      () =>
        parseChatMessage({
          role: 'user',
          get content(): string {
            return boom()
          },
        }),
    ],
    [
      'toMessage of a copy (its payload field)',
      () =>
        toMessage({
          ...m,
          payload: {
            role: 'user',
            get content(): string {
              return boom()
            },
          },
        }),
    ],
  ])('%s: a payload that cannot be read names the argument at fault, details.field payload (not an internal function)', (_name, call) => {
    // when / then
    expect(thrown(call)).toEqual({ code: 'INVALID_INPUT', field: 'payload' })
  })
})
