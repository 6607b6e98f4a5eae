/**
 * fast-check arbitraries for payloads of the `anthropic` format (the Messages API's `MessageParam`).
 * @packageDocumentation
 */
import fc from 'fast-check'
import type { AnthropicMessageParam, JsonValue } from '@turnlog/core'
import { jsonValueArb, nonEmptyWeirdStringArb, weirdCharArb, weirdStringArb } from '../arbitraries.js'
import { shuffledObjectArb, type Entries } from '../shuffled-object-arbitrary.js'

/** Keys a block's or a message's unknown fields must not take: the schema reads them. */
const RESERVED = new Set([
  'type',
  'role',
  'content',
  'text',
  'citations',
  'source',
  'title',
  'thinking',
  'signature',
  'data',
  'id',
  'name',
  'input',
  'tool_use_id',
  'is_error',
  'file_id',
  'tool_name',
])

/** Unknown fields: real extras (`cache_control`), names that collide with turnlog's envelope, `__proto__`, weird strings. */
const extrasArb: fc.Arbitrary<[string, JsonValue][]> = fc.array(
  fc.tuple(
    fc
      .oneof(
        fc.constantFrom('cache_control', 'caller', 'createdAt', 'status', 'externalId', 'payload', '__proto__', 'constructor', '0'),
        weirdStringArb,
      )
      .filter((k) => !RESERVED.has(k)),
    jsonValueArb,
  ),
  { maxLength: 2 },
)

/** An object from `known` entries plus unknown ones, keys in a random order (`__proto__` as an own property). */
function objectOf(
  known: fc.Arbitrary<Entries>,
  extras: fc.Arbitrary<[string, JsonValue][]> = extrasArb,
): fc.Arbitrary<Record<string, unknown>> {
  return shuffledObjectArb(known, extras)
}

const maybe = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<T | undefined> => fc.option(arb, { nil: undefined, freq: 2 })

/** A tool-use id: usually the API's `toolu_…`, sometimes a weird string. */
export const anthropicToolUseIdArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 3, arbitrary: fc.stringMatching(/^toolu_[A-Za-z0-9]{1,24}$/) },
  { weight: 1, arbitrary: nonEmptyWeirdStringArb },
)

const jsonObjectArb: fc.Arbitrary<Record<string, JsonValue>> = fc.dictionary(
  fc.string({ unit: weirdCharArb, maxLength: 6 }),
  jsonValueArb,
  { maxKeys: 3 },
)
const cacheControlArb = maybe(
  fc.constantFrom<JsonValue>({ type: 'ephemeral' }, { type: 'ephemeral', ttl: '5m' }, { type: 'ephemeral', ttl: '1h' }),
)

const textBlockArb = objectOf(
  fc.tuple(weirdStringArb, cacheControlArb).map(([text, cc]): Entries => [
    ['type', 'text'],
    ['text', text],
    ['cache_control', cc],
  ]),
)
const imageBlockArb = objectOf(
  fc
    .oneof(
      fc.record({
        type: fc.constant('base64'),
        media_type: fc.constantFrom('image/png', 'image/jpeg'),
        data: fc.base64String({ maxLength: 16 }),
      }),
      fc.record({ type: fc.constant('url'), url: fc.webUrl() }),
    )
    .map((source): Entries => [
      ['type', 'image'],
      ['source', source],
    ]),
)
const documentBlockArb = objectOf(
  fc.tuple(weirdStringArb, maybe(weirdStringArb)).map(([data, title]): Entries => [
    ['type', 'document'],
    ['source', { type: 'text', media_type: 'text/plain', data }],
    ['title', title],
  ]),
)
const searchResultBlockArb = objectOf(
  fc.tuple(weirdStringArb, weirdStringArb, fc.array(weirdStringArb, { maxLength: 2 })).map(([source, title, texts]): Entries => [
    ['type', 'search_result'],
    ['source', source],
    ['title', title],
    ['content', texts.map((text) => ({ type: 'text', text }))],
  ]),
)
const thinkingBlockArb = objectOf(
  fc.tuple(weirdStringArb, fc.base64String({ maxLength: 24 })).map(([thinking, signature]): Entries => [
    ['type', 'thinking'],
    ['thinking', thinking],
    ['signature', signature],
  ]),
  fc.constant([]),
)
const redactedThinkingBlockArb = fc.base64String({ maxLength: 24 }).map((data) => ({ type: 'redacted_thinking', data }))
const serverToolBlocksArb: fc.Arbitrary<Record<string, unknown>[]> = fc
  .tuple(fc.stringMatching(/^srvtoolu_[A-Za-z0-9]{1,16}$/), weirdStringArb, weirdStringArb)
  .map(([id, query, title]) => [
    { type: 'server_tool_use', id, name: 'web_search', input: { query } },
    {
      type: 'web_search_tool_result',
      tool_use_id: id,
      content: [{ type: 'web_search_result', title, url: 'https://example.com/', encrypted_content: 'Eq==' }],
    },
  ])
/** Block types this format does not know (a newer API's), with fields of any kind. */
const unknownBlockArb = objectOf(
  fc
    .tuple(fc.constantFrom('hologram', 'future_block', 'mcp_tool_use', 'tool_result_v2'), jsonValueArb, maybe(anthropicToolUseIdArb))
    .map(([type, value, id]): Entries => [
      ['type', type],
      ['value', value],
      ['tool_use_id', id],
    ]),
)

const toolNameArb = fc.stringMatching(/^[a-z_]{1,16}$/)

/** A `tool_use` block calling `id` (a client tool the application must answer). */
export function anthropicToolUseBlockArb(id: fc.Arbitrary<string> = anthropicToolUseIdArb): fc.Arbitrary<Record<string, unknown>> {
  return objectOf(
    fc.tuple(id, toolNameArb, jsonObjectArb, cacheControlArb).map(([toolId, name, input, cc]): Entries => [
      ['type', 'tool_use'],
      ['id', toolId],
      ['name', name],
      ['input', input],
      ['cache_control', cc],
    ]),
  )
}

/** A `tool_result` block answering `id`: string or block content, sometimes `is_error`. */
export function anthropicToolResultBlockArb(id: fc.Arbitrary<string> = anthropicToolUseIdArb): fc.Arbitrary<Record<string, unknown>> {
  return objectOf(
    fc
      .tuple(
        id,
        fc.oneof(
          weirdStringArb,
          fc.array(fc.oneof(textBlockArb, imageBlockArb, searchResultBlockArb), { maxLength: 2 }),
          fc.constant(undefined),
        ),
        maybe(fc.boolean()),
      )
      .map(([toolUseId, content, isError]): Entries => [
        ['type', 'tool_result'],
        ['tool_use_id', toolUseId],
        ['content', content],
        ['is_error', isError],
      ]),
  )
}

/** True when no two blocks are `tool_use` blocks with one id, or `tool_result` blocks for one id (the schema refuses that). */
function idsOnce(blocks: readonly Record<string, unknown>[]): boolean {
  const seen = new Set<string>()
  for (const b of blocks) {
    const key =
      b['type'] === 'tool_use' ? `u:${String(b['id'])}` : b['type'] === 'tool_result' ? `r:${String(b['tool_use_id'])}` : undefined
    if (key === undefined) continue
    if (seen.has(key)) return false
    seen.add(key)
  }
  return true
}

/** A message of `role` whose content is a string or a list of `blocks` (which may be empty only for the assistant). */
function messageOf(
  role: 'user' | 'assistant' | 'system',
  blocks: fc.Arbitrary<Record<string, unknown>[]>,
): fc.Arbitrary<AnthropicMessageParam> {
  const content = fc.oneof({ weight: 1, arbitrary: weirdStringArb }, { weight: 3, arbitrary: blocks.filter(idsOnce) })
  return objectOf(
    content.map((c): Entries => [
      ['role', role],
      ['content', c],
    ]),
    extrasArb.map((e) => e.filter(([k]) => k !== 'type')),
  ).map((m) => m as unknown as AnthropicMessageParam)
}

const userBlockArb = fc.oneof(
  textBlockArb,
  imageBlockArb,
  documentBlockArb,
  searchResultBlockArb,
  anthropicToolResultBlockArb(),
  fc.constant({ type: 'container_upload', file_id: 'file_01' }),
  unknownBlockArb,
)
const assistantBlocksArb: fc.Arbitrary<Record<string, unknown>[]> = fc
  .array(
    fc.oneof(
      textBlockArb.map((b) => [b]),
      thinkingBlockArb.map((b) => [b]),
      redactedThinkingBlockArb.map((b) => [b]),
      anthropicToolUseBlockArb().map((b) => [b]),
      serverToolBlocksArb,
      unknownBlockArb.map((b) => [b]),
    ),
    { maxLength: 4 },
  )
  .map((groups) => groups.flat())

/**
 * Valid payloads of the `anthropic` format: user turns (text, image, document, search_result,
 * tool_result, container_upload blocks), assistant turns (text, thinking, redacted_thinking,
 * tool_use, server_tool_use with its web_search_tool_result), system turns (text), string or block
 * content, block types from a newer API, and unknown fields (`cache_control`, `__proto__`, names of
 * turnlog's envelope) with keys in a random order. Strings come from {@link weirdStringArb} (NUL,
 * lone surrogates, astral characters).
 */
export const anthropicPayloadArb: fc.Arbitrary<AnthropicMessageParam> = fc.oneof(
  messageOf('user', fc.array(userBlockArb, { minLength: 1, maxLength: 4 })),
  messageOf('assistant', assistantBlocksArb),
  messageOf('system', fc.array(textBlockArb, { minLength: 1, maxLength: 2 })),
)

/** An assistant turn calling each of `ids` (with text and thinking around the calls, sometimes). */
export function anthropicCallingArb(ids: readonly string[]): fc.Arbitrary<AnthropicMessageParam> {
  return fc
    .tuple(fc.tuple(...ids.map((id) => anthropicToolUseBlockArb(fc.constant(id)))), maybe(thinkingBlockArb), maybe(textBlockArb))
    .map(
      ([calls, thinking, text]) =>
        ({
          role: 'assistant',
          content: [...(thinking ? [thinking] : []), ...(text ? [text] : []), ...calls],
        }) as unknown as AnthropicMessageParam,
    )
}

/** A user turn answering each of `ids`, tool_result blocks first, sometimes followed by text. */
export function anthropicAnsweringArb(ids: readonly string[]): fc.Arbitrary<AnthropicMessageParam> {
  return fc
    .tuple(fc.tuple(...ids.map((id) => anthropicToolResultBlockArb(fc.constant(id)))), maybe(textBlockArb))
    .map(([results, text]) => ({ role: 'user', content: [...results, ...(text ? [text] : [])] }) as unknown as AnthropicMessageParam)
}
