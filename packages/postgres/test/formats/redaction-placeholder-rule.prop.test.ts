/**
 * One placeholder rule in two places: `isRedactedPayload(p, format)` (core, used by the audit) answers
 * as `turnlog.is_redaction_placeholder(p, p_format)` (the check `redact` must pass) for every built-in
 * format, on Postgres and on PGlite: for payloads of each format, their placeholders, the other
 * formats' placeholders and placeholders with one string put back.
 */
import { describe, expect, it } from '@jest/globals'
import {
  AI_SDK_MODEL_FORMAT,
  AI_SDK_UI_FORMAT,
  ANTHROPIC_FORMAT,
  JSON_FORMAT,
  OPENAI_AGENTS_FORMAT,
  OPENAI_CHAT_FORMAT,
  OPENAI_RESPONSES_FORMAT,
  createMessage,
  isRedactedPayload,
  redactedPayload,
} from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import {
  aiSdkModelPayloadArb,
  aiSdkUiPayloadArb,
  anthropicPayloadArb,
  chatPayloadArb,
  jsonPayloadArb,
  openAIAgentsItemArb,
  openAIResponsesItemArb,
  STORE_KINDS,
  useTestStoreOfKind,
} from '@turnlog/testing'
import fc from 'fast-check'
import { sql } from 'kysely'

const FORMATS: readonly (readonly [string, fc.Arbitrary<unknown>])[] = [
  [OPENAI_CHAT_FORMAT, chatPayloadArb],
  [JSON_FORMAT, jsonPayloadArb],
  [OPENAI_RESPONSES_FORMAT, openAIResponsesItemArb],
  [OPENAI_AGENTS_FORMAT, openAIAgentsItemArb],
  [ANTHROPIC_FORMAT, anthropicPayloadArb],
  [AI_SDK_UI_FORMAT, aiSdkUiPayloadArb],
  [AI_SDK_MODEL_FORMAT, aiSdkModelPayloadArb],
]
const NAMES = FORMATS.map(([name]) => name)

/** `value` with its `n`-th string (depth first) replaced by `text`: a placeholder that kept some content. */
function withString(value: unknown, n: number, text: string): unknown {
  let seen = 0
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return seen++ === n ? text : v
    if (Array.isArray(v)) return v.map(walk)
    if (typeof v === 'object' && v !== null) return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, walk(x)]))
    return v
  }
  return walk(value)
}

/** Candidates: a payload of `format`, its placeholder, a chat placeholder, `{ redacted: true }`, a placeholder with content put back. */
const candidatesArb = fc.oneof(...FORMATS.map(([format, arb]) => fc.tuple(fc.constant(format), arb))).chain(([format, payload]) =>
  fc.tuple(chatPayloadArb, fc.nat(8), fc.constantFrom('secret', '[redacted]', 'x')).map(([chat, n, text]) => {
    const placeholder = redactedPayload(payload, format)
    return [
      payload,
      placeholder,
      redactedPayload(chat),
      { redacted: true },
      withString(placeholder, n, text),
      withString(redactedPayload(chat), n, text),
    ]
  }),
)

/** The database's answer for each (candidate, format) pair, in order. */
async function databaseSays(store: PostgresStore, pairs: readonly (readonly [unknown, string])[]): Promise<boolean[]> {
  const { rows } = await sql<{ ok: boolean | null }>`
    select turnlog.is_redaction_placeholder(turnlog.json_operable(p.value), f.value) as ok
      from json_array_elements(${JSON.stringify(pairs.map(([c]) => c))}::json) with ordinality as p(value, i)
      join json_array_elements_text(${JSON.stringify(pairs.map(([, f]) => f))}::json) with ordinality as f(value, i) using (i)
     order by i`.execute(store.db)
  return rows.map((r) => r.ok === true)
}

describe.each(STORE_KINDS)('the redaction placeholder rule (%s)', (kind) => {
  let opened: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store: opened } = t))
  const store = (): PostgresStore => opened

  it('isRedactedPayload(p, format) answers as turnlog.is_redaction_placeholder(p, format) for every built-in format (property)', async () => {
    await fc.assert(
      fc.asyncProperty(candidatesArb, async (candidates) => {
        const pairs = candidates.flatMap((c) => NAMES.map((format) => [c, format] as const))
        expect(pairs.map(([c, format]) => isRedactedPayload(c, format))).toEqual(await databaseSays(store(), pairs))
      }),
      { numRuns: kind === 'postgres' ? 60 : 30 },
    )
  }, 120_000)

  it('each format accepts its own placeholder; openai-chat only the chat shape, the others only structural ones', async () => {
    // given
    const chat = redactedPayload({
      role: 'assistant',
      content: 'x',
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }],
    })
    const structural = { redacted: true }

    // when
    const pairs = NAMES.flatMap((format) => [[chat, format] as const, [structural, format] as const])
    const sqlSays = await databaseSays(store(), pairs)

    // then
    expect(pairs.map(([c, format]) => isRedactedPayload(c, format))).toEqual(sqlSays)
    expect(NAMES.map((format) => [format, isRedactedPayload(chat, format), isRedactedPayload(structural, format)])).toEqual(
      NAMES.map((format) => [format, format === OPENAI_CHAT_FORMAT, format !== OPENAI_CHAT_FORMAT]),
    )
  })

  it('keys that differ only in a lone surrogate stay two keys: the placeholder is one, and redact stores it', async () => {
    // given: the property's counterexample (the database's JSON copy once turned every such escape into
    // one '?', so the two keys became duplicates and the shape check refused a true placeholder)
    const payload = {
      role: 'user',
      content: [
        { type: 'hologram', value: [], cache_control: { '\udc00': null, '\udc01': false } },
        { type: 'text', text: 'secret \udc02' },
      ],
    }
    const session = await store().createSession()
    const message = createMessage<object>(payload, { format: ANTHROPIC_FORMAT })
    await store().append(session, [message])

    // when
    const placeholder = redactedPayload(payload, ANTHROPIC_FORMAT)
    const sqlSays = await databaseSays(store(), [[placeholder, ANTHROPIC_FORMAT]])
    await store().redact(session, message.id)

    // then
    expect(sqlSays).toEqual([true])
    expect(isRedactedPayload(placeholder, ANTHROPIC_FORMAT)).toBe(true)
    const [stored] = (await store().load(session)).messages
    expect(stored?.payload).toEqual(placeholder)
    expect(JSON.stringify(stored?.payload)).toContain('\\udc01')
  })
})
