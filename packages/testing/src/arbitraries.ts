/**
 * fast-check arbitraries shared by turnlog's property and contract tests.
 *
 * Strings here are deliberately hostile: real tool output contains NUL bytes, lone UTF-16 surrogates
 * (a string sliced in the middle of an emoji), astral characters and right-to-left text. Postgres
 * `jsonb` refuses `\u0000` and lone surrogates, and `TextEncoder` silently replaces lone surrogates, so
 * any storage or hashing path that is not byte-exact fails on these inputs.
 * @packageDocumentation
 */
import fc from 'fast-check'
import { createMessage, type ChatMessage, type CreateMessageOptions, type JsonValue, type Message } from '@turnlog/core'
import { shuffledObjectArb, type Entries } from './shuffled-object-arbitrary.js'

const char = (min: number, max: number): fc.Arbitrary<string> => fc.integer({ min, max }).map((c) => String.fromCharCode(c))

/**
 * One "character" of {@link weirdStringArb}: printable ASCII, C0 controls (NUL among them), JSON
 * escape candidates, lone high and lone low surrogates, astral code points (emoji, ZWJ sequences),
 * right-to-left text and bidi controls, and any other code point.
 */
export const weirdCharArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: char(0x20, 0x7e) },
  { weight: 2, arbitrary: fc.constant('\u0000') },
  { weight: 1, arbitrary: char(0x00, 0x1f) },
  { weight: 1, arbitrary: fc.constantFrom('"', '\\', '/', '\u007f', '\u2028', '\u2029', '\ufeff', '\ufffd', '\uffff') },
  { weight: 2, arbitrary: char(0xd800, 0xdbff) },
  { weight: 2, arbitrary: char(0xdc00, 0xdfff) },
  { weight: 2, arbitrary: fc.constantFrom('😀', '👩‍👩‍👧‍👦', '🏳️‍🌈', '𝄞', '𠜎', '🤖') },
  { weight: 1, arbitrary: fc.integer({ min: 0x10000, max: 0x10ffff }).map((c) => String.fromCodePoint(c)) },
  { weight: 2, arbitrary: fc.constantFrom('שלום', 'مرحبا', '\u200f', '\u200e', '\u202e', '\u2067', 'ע', 'ب') },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', minLength: 1, maxLength: 1 }) },
)

/**
 * Strings mixing ASCII, `\u0000`, lone high/low surrogates, astral characters (emoji), RTL text and,
 * now and then, long runs of one character (hundreds to thousands of UTF-16 units) or a leading
 * U+FEFF (byte order mark). May be empty.
 */
export const weirdStringArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.string({ unit: weirdCharArb, maxLength: 24 }) },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.string({ unit: weirdCharArb, maxLength: 4 }),
        weirdCharArb,
        fc.integer({ min: 64, max: 4096 }),
        fc.string({ unit: weirdCharArb, maxLength: 4 }),
      )
      .map(([head, c, n, tail]) => head + c.repeat(n) + tail),
  },
  // a leading U+FEFF (byte order mark): a UTF-8 decoder may strip it (PGlite's did)
  { weight: 1, arbitrary: fc.string({ unit: weirdCharArb, maxLength: 8 }).map((s) => `\ufeff${s}`) },
)

/** Like {@link weirdStringArb} but never empty (ids, names). */
export const nonEmptyWeirdStringArb: fc.Arbitrary<string> = weirdStringArb.filter((s) => s.length > 0)

/**
 * Non-empty strings of at most 256 UTF-16 units that the Postgres store accepts for engine-visible
 * fields (`externalId`, tenant, reasons): {@link weirdStringArb} with every NUL and lone surrogate
 * replaced by U+FFFD, so astral characters, RTL text and controls stay. See ADR 0001.
 */
export const safeTextArb: fc.Arbitrary<string> = nonEmptyWeirdStringArb.map((s) =>
  // eslint-disable-next-line no-control-regex
  s.slice(0, 256).replace(/\u0000|\p{Cs}/gu, '\ufffd'),
)

/**
 * JSON values (what `JSON.parse` can return, `-0` included) whose strings and object keys are
 * {@link weirdStringArb} units. Nesting stays shallow (at most 4 levels) so payloads stay far below
 * the 64-level limit of `createMessage`.
 */
export const jsonValueArb: fc.Arbitrary<JsonValue> = fc.jsonValue({ stringUnit: weirdCharArb, maxDepth: 4 }) as fc.Arbitrary<JsonValue>

/** Keys a payload's extra fields must not take: they have a meaning the schema checks. */
const RESERVED_KEYS = new Set(['role', 'content', 'name', 'tool_calls', 'tool_call_id', 'call_id'])

/**
 * Names of unknown provider fields: real ones (`reasoning_details`, `refusal`), names that collide
 * with turnlog's envelope (`id`, `createdAt`, `status`, …, which a payload may legitimately carry),
 * `__proto__`, and weird strings.
 */
const extraKeyArb: fc.Arbitrary<string> = fc
  .oneof(
    fc.constantFrom(
      'reasoning_details',
      'refusal',
      'audio',
      'annotations',
      'cache_control',
      'prefix',
      'id',
      'createdAt',
      'ephemeral',
      'externalId',
      'status',
      'payload',
      '__proto__',
      'constructor',
      'toString',
      '0',
      '10',
    ),
    weirdStringArb,
  )
  .filter((k) => !RESERVED_KEYS.has(k))

const extraFieldsArb: fc.Arbitrary<[string, JsonValue][]> = fc.array(fc.tuple(extraKeyArb, jsonValueArb), { maxLength: 4 })

/**
 * Builds an object from entries in a random order, with `Object.fromEntries` so that a `__proto__`
 * key becomes a plain own property (as `JSON.parse` makes it), never the prototype.
 */
function objectArb(
  required: fc.Arbitrary<Entries>,
  extras: fc.Arbitrary<[string, JsonValue][]> = extraFieldsArb,
): fc.Arbitrary<Record<string, unknown>> {
  return shuffledObjectArb(required, extras)
}

const partArb: fc.Arbitrary<Record<string, unknown>> = fc.oneof(
  objectArb(
    fc.tuple(weirdStringArb).map(([text]): Entries => [
      ['type', 'text'],
      ['text', text],
    ]),
    fc.constant([]),
  ),
  objectArb(
    fc.tuple(fc.webUrl(), fc.option(fc.constantFrom('auto', 'low', 'high'), { nil: undefined })).map(([url, detail]): Entries => [
      ['type', 'image_url'],
      ['image_url', detail === undefined ? { url } : { url, detail }],
    ]),
    fc.constant([]),
  ),
  objectArb(
    fc.tuple(fc.constantFrom('input_audio', 'file', 'refusal', 'thinking'), weirdStringArb).map(([type, data]): Entries => [
      ['type', type],
      ['data', data],
    ]),
  ),
)

/** Content of a system/developer/user/tool message: a string or a non-empty list of parts. */
const contentArb: fc.Arbitrary<string | Record<string, unknown>[]> = fc.oneof(
  { weight: 3, arbitrary: weirdStringArb },
  { weight: 1, arbitrary: fc.array(partArb, { minLength: 1, maxLength: 3 }) },
)

const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 2 })

/** A provider tool-call id: usually `call_…`, sometimes a weird string. */
export const toolCallIdArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^call_[A-Za-z0-9]{1,12}$/) },
  { weight: 1, arbitrary: nonEmptyWeirdStringArb },
)

const toolCallArb: fc.Arbitrary<Record<string, unknown>> = fc
  .tuple(
    toolCallIdArb,
    fc.boolean(),
    fc.stringMatching(/^[a-z_]{1,16}$/),
    fc.oneof(
      jsonValueArb.map((v) => JSON.stringify(v)),
      weirdStringArb,
    ),
  )
  .chain(([id, useCallId, name, args]) =>
    objectArb(
      fc.constant<Entries>([
        [useCallId ? 'call_id' : 'id', id],
        ['type', 'function'],
        ['function', { name, arguments: args }],
      ]),
      fc.array(
        fc.tuple(
          extraKeyArb.filter((k) => k !== 'id' && k !== 'type' && k !== 'function'),
          jsonValueArb,
        ),
        { maxLength: 1 },
      ),
    ),
  )

const nameArb = maybe(weirdStringArb)

const plainRoleArb = (role: 'system' | 'developer' | 'user'): fc.Arbitrary<Record<string, unknown>> =>
  objectArb(
    fc.tuple(contentArb, nameArb).map(([content, name]): Entries => [
      ['role', role],
      ['content', content],
      ['name', name],
    ]),
  )

const assistantArb: fc.Arbitrary<Record<string, unknown>> = objectArb(
  fc
    .record({
      content: fc.oneof(weirdStringArb, fc.constant(null), fc.constant(undefined), fc.array(partArb, { minLength: 1, maxLength: 2 })),
      toolCalls: maybe(fc.array(toolCallArb, { minLength: 1, maxLength: 3 })),
      reasoning: maybe(weirdStringArb),
      finish: maybe(fc.constantFrom('stop', 'tool_calls', 'length')),
      name: nameArb,
    })
    .map(({ content, toolCalls, reasoning, finish, name }): Entries => [
      ['role', 'assistant'],
      ['content', content],
      ['tool_calls', toolCalls],
      ['reasoning_content', reasoning],
      ['finish_reason', finish],
      ['name', name],
    ]),
)

const toolArb: fc.Arbitrary<Record<string, unknown>> = objectArb(
  fc.tuple(toolCallIdArb, fc.boolean(), contentArb, nameArb).map(([id, useCallId, content, name]): Entries => [
    ['role', 'tool'],
    [useCallId ? 'call_id' : 'tool_call_id', id],
    ['content', content],
    ['name', name],
  ]),
)

/**
 * Valid provider payloads (OpenAI chat format, extended) for every role: system, developer and user
 * (string or parts content); assistant (content string, null or absent; optional `tool_calls` with
 * `id` or `call_id`; `reasoning_content`; `finish_reason`); tool (`tool_call_id` or `call_id`). Every
 * payload may carry unknown provider fields with JSON values, keys in random order, including
 * `__proto__` (as an own property) and names that collide with turnlog's envelope (`id`, `status`).
 * Strings come from {@link weirdStringArb}. Numbers may be `-0` (createMessage stores `0`).
 */
export const chatPayloadArb: fc.Arbitrary<ChatMessage> = fc
  .oneof(plainRoleArb('system'), plainRoleArb('developer'), plainRoleArb('user'), assistantArb, toolArb)
  .map((p) => p as unknown as ChatMessage)

/**
 * Valid payloads of the opaque `json` format: JSON objects whose keys and strings are
 * {@link weirdStringArb} units (NUL, lone surrogates, astral characters), `__proto__` included.
 */
export const jsonPayloadArb: fc.Arbitrary<{ readonly [key: string]: JsonValue }> = fc.dictionary(
  fc.string({ unit: weirdCharArb, maxLength: 6 }),
  jsonValueArb,
  { maxKeys: 5 },
)

/**
 * A message's `meta` as applications write it (model, usage, latency, trace id, app data). Strings are
 * {@link safeTextArb} (a store refuses NUL and lone surrogates in `meta`, as in every envelope field).
 */
export const metaArb: fc.Arbitrary<{ readonly [key: string]: JsonValue }> = fc
  .record(
    {
      model: safeTextArb,
      usage: fc.record({ prompt_tokens: fc.nat(), completion_tokens: fc.nat() }),
      latencyMs: fc.double({ min: 0, max: 1e6, noNaN: true }),
      traceId: safeTextArb,
      app: fc.dictionary(safeTextArb, fc.oneof(safeTextArb, fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 3 }),
    },
    { requiredKeys: [] },
  )
  .map((m) => m as { readonly [key: string]: JsonValue })

/** A payload with its format: an `openai-chat` payload ({@link chatPayloadArb}) or a `json` one ({@link jsonPayloadArb}). */
export const formatPayloadArb: fc.Arbitrary<{ readonly format: 'openai-chat' | 'json'; readonly payload: object }> = fc.oneof(
  chatPayloadArb.map((payload) => ({ format: 'openai-chat' as const, payload })),
  jsonPayloadArb.map((payload) => ({ format: 'json' as const, payload })),
)

/** ISO-8601 timestamps between 1970 and 2100 (what `createMessage` accepts as `createdAt`). */
export const createdAtArb: fc.Arbitrary<string> = fc
  .date({ min: new Date('1970-01-01T00:00:00.000Z'), max: new Date('2100-01-01T00:00:00.000Z'), noInvalidDate: true })
  .map((d) => d.toISOString())

/**
 * Messages made by `createMessage` from {@link chatPayloadArb}, with random envelope options:
 * `ephemeral`, `externalId` (a {@link safeTextArb} string, which stores accept, so the id is its
 * UUIDv5) with a `scope` (a string, or null), `status: 'partial'` and `createdAt`. Payloads keep every weird character. Ids are minted at
 * generation time, so replays of a failing seed get new ids.
 */
export const messageArb: fc.Arbitrary<Message> = fc
  .record({
    payload: chatPayloadArb,
    ephemeral: maybe(fc.boolean()),
    externalId: fc.option(safeTextArb, { nil: undefined, freq: 4 }),
    scope: fc.option(safeTextArb, { nil: null }),
    partial: fc.boolean(),
    createdAt: maybe(createdAtArb),
  })
  .map(({ payload, ephemeral, externalId, scope, partial, createdAt }) => {
    const options: { -readonly [K in keyof CreateMessageOptions]: CreateMessageOptions[K] } = {}
    if (ephemeral !== undefined) options.ephemeral = ephemeral
    if (externalId !== undefined) {
      options.externalId = externalId
      options.scope = scope
    }
    if (partial) options.status = 'partial'
    if (createdAt !== undefined) options.createdAt = createdAt
    return createMessage(payload, options)
  })

/**
 * Any value code may throw: anything at all, a plain `Error` with any message, or one of `others`
 * (node errors with a `code`, driver errors, …), for properties over error mapping.
 */
export function thrownValueArb(...others: fc.Arbitrary<unknown>[]): fc.Arbitrary<unknown> {
  return fc.oneof(
    fc.anything(),
    fc.string().map((m) => new Error(m)),
    ...others,
  )
}
