/**
 * One placeholder rule in two places: `isRedactedPayload(p, format)` (core, used by the audit) answers
 * as `turnlog.is_redaction_placeholder(p, p_format)` (the check `redact` must pass) for every built-in
 * format, on Postgres and on PGlite: for payloads of each format, their placeholders, the other
 * formats' placeholders, placeholders with one string put back, and hostile chat shapes (a tool call's
 * id, call_id or type that is not a string, a function name that is not one, a custom call's `custom`
 * with a name or input of any JSON value or an extra key). Chat payloads include OpenAI custom tool calls.
 *
 * And the write-time rule only the database can check, `turnlog.placeholder_follows(p, orig, format)`
 * (a placeholder adds nothing to the payload it replaces): every built-in format's placeholder follows its
 * payload, each forgery of it (a key the payload lacks, a kept string changed, an array longer than the
 * payload's, a number or boolean changed) does not, and `store.redact` of payloads of every format, with
 * conflict evidence, succeeds and verifies.
 */
import { describe, expect, it } from '@jest/globals'
import { audit, verifyChain } from '@turnlog/audit'
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
  isTurnlogError,
  redactedPayload,
  type Message,
} from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import {
  aiSdkModelPayloadArb,
  aiSdkUiPayloadArb,
  anthropicPayloadArb,
  chatPayloadArb,
  jsonPayloadArb,
  jsonValueArb,
  openAIAgentsItemArb,
  openAIResponsesItemArb,
  STORE_KINDS,
  toolCallIdArb,
  useTestStoreOfKind,
  weirdStringArb,
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

/**
 * An assistant message of OpenAI custom tool calls (`type: 'custom'`, `custom: { name, input }`, sometimes
 * with a grammar `format` or another extra inside `custom`): `chatPayloadArb` makes function calls only,
 * and a custom call's placeholder keeps `custom: { name, input: '[redacted]' }` (migration 0009).
 */
const customCallChatArb: fc.Arbitrary<object> = fc
  .array(fc.tuple(toolCallIdArb, fc.stringMatching(/^[a-z_]{1,16}$/), weirdStringArb, fc.option(jsonValueArb, { nil: undefined })), {
    minLength: 1,
    maxLength: 2,
  })
  .map((calls) => ({
    role: 'assistant',
    content: null,
    tool_calls: calls.map(([id, name, input, format]) => ({
      id,
      type: 'custom',
      custom: format === undefined ? { name, input } : { name, input, format },
    })),
  }))

/** Payloads to redact: one of every built-in format's, and chat custom tool calls. */
const PAYLOADS: readonly (readonly [string, fc.Arbitrary<unknown>])[] = [...FORMATS, [OPENAI_CHAT_FORMAT, customCallChatArb]]

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

/**
 * A chat placeholder with one tool call made hostile: its `id`, `call_id`, `type` or function `name`
 * any JSON value (an object of content, a number, null), or its function without a name; or a custom
 * call's `custom` name or input any JSON value, an extra key in `custom`, or `custom` any JSON value.
 */
const hostileChatArb = fc
  .tuple(
    fc.constantFrom('user', 'assistant', 'tool'),
    fc.constantFrom('id', 'call_id', 'type', 'name', 'no name', 'custom name', 'custom input', 'custom key', 'custom'),
    fc.oneof(jsonValueArb, fc.constant({ injected: 'ARBITRARY TEXT', more: [1, 2, { x: 'y' }] })),
  )
  .map(([role, where, value]) => {
    const call: Record<string, unknown> = where.startsWith('custom')
      ? { id: 'call_1', type: 'custom', custom: { name: 'f', input: '[redacted]' } }
      : { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } }
    if (where === 'name') call['function'] = { name: value, arguments: '{}' }
    else if (where === 'no name') call['function'] = { arguments: '{}' }
    else if (where === 'custom name') call['custom'] = { name: value, input: '[redacted]' }
    else if (where === 'custom input') call['custom'] = { name: 'f', input: value }
    else if (where === 'custom key') call['custom'] = { name: 'f', input: '[redacted]', injected: value }
    else call[where] = value
    return { role, content: '[redacted]', tool_calls: [call] }
  })

/**
 * Candidates: a payload of `format`, its placeholder, a chat placeholder, `{ redacted: true }`, a
 * placeholder with content put back, a hostile chat shape.
 */
const candidatesArb = fc.oneof(...PAYLOADS.map(([format, arb]) => fc.tuple(fc.constant(format), arb))).chain(([format, payload]) =>
  fc
    .tuple(fc.oneof(chatPayloadArb, customCallChatArb), fc.nat(8), fc.constantFrom('secret', '[redacted]', 'x'), hostileChatArb)
    .map(([chat, n, text, hostile]) => {
      const placeholder = redactedPayload(payload, format)
      return [
        payload,
        placeholder,
        redactedPayload(chat),
        { redacted: true },
        withString(placeholder, n, text),
        withString(redactedPayload(chat), n, text),
        hostile,
      ]
    }),
)

/** A key no payload of the arbitraries has. */
const HOSTILE_KEY = 'ARBITRARY CONTENT IN A KEY: the password is hunter2'

type Path = readonly (string | number)[]

/** The first place (depth first) where `test` holds of the placeholder's value and the original's value there. */
function findPlace(placeholder: unknown, original: unknown, test: (p: unknown, o: unknown) => boolean): Path | undefined {
  const walk = (p: unknown, o: unknown, path: Path): Path | undefined => {
    if (test(p, o)) return path
    if (Array.isArray(p) && Array.isArray(o)) {
      for (let i = 0; i < p.length; i++) {
        const found = walk(p[i], o[i], [...path, i])
        if (found) return found
      }
    } else if (typeof p === 'object' && p !== null && typeof o === 'object' && o !== null && !Array.isArray(p) && !Array.isArray(o)) {
      for (const [k, v] of Object.entries(p)) {
        if (!Object.hasOwn(o, k)) continue
        const found = walk(v, (o as Record<string, unknown>)[k], [...path, k])
        if (found) return found
      }
    }
    return undefined
  }
  return walk(placeholder, original, [])
}

/** A copy of `value` with the value at `path` replaced by `change` of it. */
function changedAt(value: unknown, path: Path, change: (v: unknown) => unknown): unknown {
  const copy: unknown = JSON.parse(JSON.stringify(value))
  if (path.length === 0) return change(copy)
  let parent = copy as Record<string | number, unknown>
  for (const key of path.slice(0, -1)) parent = parent[key] as Record<string | number, unknown>
  const last = path[path.length - 1] as string | number
  Object.defineProperty(parent, last, { value: change(parent[last]), enumerable: true, writable: true, configurable: true })
  return copy
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/**
 * Forgeries of `placeholder` (the placeholder of `original`), each adding to what `original` holds: a key
 * it lacks (at the top, in the first object inside), a kept string changed, an array as long as the
 * original's made longer, a number made 1, a boolean flipped. Only those the placeholder has a place for.
 */
function forgeriesOf(placeholder: unknown, original: unknown): [string, unknown][] {
  const out: [string, unknown][] = []
  const add = (what: string, test: (p: unknown, o: unknown) => boolean, change: (v: unknown) => unknown): void => {
    const path = findPlace(placeholder, original, test)
    if (path !== undefined) out.push([what, changedAt(placeholder, path, change)])
  }
  const withKey = (v: unknown): unknown => Object.defineProperty({ ...(v as object) }, HOSTILE_KEY, { value: null, enumerable: true })
  add('a key the payload lacks, at the top', (p) => isPlainObject(p), withKey)
  add(
    'a key the payload lacks, inside',
    (p, o) => isPlainObject(p) && p !== placeholder && isPlainObject(o) && !Object.hasOwn(o, HOSTILE_KEY),
    withKey,
  )
  add(
    'a kept string changed',
    (p) => typeof p === 'string' && p !== '[redacted]' && p !== '{}',
    (v) => `${String(v)} hunter2`,
  )
  add(
    'an array longer than the payload’s',
    (p, o) => Array.isArray(p) && Array.isArray(o) && p.length === o.length,
    (v) => [...(v as unknown[]), '[redacted]'],
  )
  add(
    'a number made 1',
    (p) => typeof p === 'number',
    () => 1,
  )
  add(
    'a boolean flipped',
    (p) => typeof p === 'boolean',
    (v) => !(v as boolean),
  )
  return out
}

/** For each (placeholder, original, format): [is_redaction_placeholder and placeholder_follows, placeholder_follows alone]. */
async function databaseFollows(
  store: PostgresStore,
  triples: readonly (readonly [unknown, unknown, string])[],
): Promise<[boolean, boolean][]> {
  const { rows } = await sql<{ ok: boolean | null; follows: boolean | null }>`
    select turnlog.is_redaction_placeholder(turnlog.json_operable(p.value), f.value)
           and turnlog.placeholder_follows(turnlog.json_operable(p.value), turnlog.json_operable(o.value), f.value) as ok,
           turnlog.placeholder_follows(turnlog.json_operable(p.value), turnlog.json_operable(o.value), f.value) as follows
      from json_array_elements(${JSON.stringify(triples.map(([p]) => p))}::json) with ordinality as p(value, i)
      join json_array_elements(${JSON.stringify(triples.map(([, o]) => o))}::json) with ordinality as o(value, i) using (i)
      join json_array_elements_text(${JSON.stringify(triples.map(([, , f]) => f))}::json) with ordinality as f(value, i) using (i)
     order by i`.execute(store.db)
  return rows.map((r) => [r.ok === true, r.follows === true])
}

/** One payload of every built-in format and a chat custom tool call, each with another of the same format (a conflicting write of its id). */
const everyFormatArb = fc.tuple(...PAYLOADS.map(([format, arb]) => fc.tuple(fc.constant(format), arb, arb)))

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

  it('every built-in format’s placeholder follows its payload (turnlog.placeholder_follows), and no forgery of it does (property)', async () => {
    const tried = new Set<string>()
    await fc.assert(
      fc.asyncProperty(fc.oneof(...PAYLOADS.map(([format, arb]) => fc.tuple(fc.constant(format), arb))), async ([format, payload]) => {
        // given the payload's placeholder and its forgeries
        const placeholder = redactedPayload(payload, format)
        const forgeries = forgeriesOf(placeholder, payload)

        // when the database checks each against the payload
        const says = await databaseFollows(store(), [
          [placeholder, payload, format],
          ...forgeries.map(([, f]) => [f, payload, format] as const),
        ])

        // then the placeholder passes, and every forgery is refused by placeholder_follows alone
        expect(says[0]).toEqual([true, true])
        expect(forgeries.map(([what], i) => [what, says[i + 1]?.[1]])).toEqual(forgeries.map(([what]) => [what, false]))
        for (const [what] of forgeries) tried.add(what)
      }),
      { numRuns: kind === 'postgres' ? 150 : 60 },
    )
    // every kind of forgery was tried (the property is not vacuous)
    expect(tried.size).toBe(6)
  }, 180_000)

  it('store.redact of payloads of every built-in format, with conflict evidence, succeeds and verifies (property)', async () => {
    let evidence = 0
    await fc.assert(
      fc.asyncProperty(everyFormatArb, async (cases) => {
        // given a session holding one message of every format, each with a refused conflicting write
        const session = await store().createSession()
        const messages = cases.map(([format, payload]) => createMessage<object>(payload as object, { format }))
        await store().append(session, messages as Message[])
        for (const [i, [format, , other]] of cases.entries()) {
          const clash = createMessage<object>(other as object, { format, id: messages[i]?.id ?? '' })
          const refused = await store()
            .append(session, [clash as Message])
            .then(() => undefined)
            .catch((e: unknown) => e)
          if (refused !== undefined) expect(isTurnlogError(refused, 'MESSAGE_CONFLICT')).toBe(true)
        }

        // when every message is redacted
        for (const m of messages) await store().redact(session, m.id)

        // then each shows its format's placeholder, so does the evidence, and the chain and the audit are clean
        const loaded = await store().load(session)
        expect(loaded.messages.map((m) => m.payload)).toEqual(cases.map(([format, payload]) => redactedPayload(payload, format)))
        const conflicts = await store().conflicts(session)
        evidence += conflicts.length
        for (const c of conflicts) {
          const format = cases[messages.findIndex((m) => m.id === c.messageId)]?.[0]
          expect(isRedactedPayload(c.incomingPayload, format)).toBe(true)
        }
        const verified = await verifyChain(store(), session)
        expect(verified.breaks).toEqual([])
        expect(verified.ok).toBe(true)
        const report = await audit(store(), session)
        expect(report.findings.filter((f) => f.kind.includes('chain') || f.kind.includes('redaction'))).toEqual([])
      }),
      { numRuns: kind === 'postgres' ? 15 : 8 },
    )
    // conflict evidence was scrubbed (the property is not vacuous)
    expect(evidence).toBeGreaterThan(0)
  }, 300_000)

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
