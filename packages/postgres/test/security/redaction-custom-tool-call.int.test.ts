/**
 * Attacks security.md, "Redaction", for an OpenAI custom tool call (`type: 'custom'`, `custom: { name,
 * input }`), on Postgres and PGlite: "The live list keeps its shape; `toWire` stays acceptable to
 * providers." Before migration 0009 the placeholder of such a call was `{ id, type }`: the API requires
 * `custom` (HTTP 400), so every request replaying the session failed. Now `store.redact` stores
 * `custom: { name, input: '[redacted]' }`; the loaded session's wire copy is a call OpenAI accepts, the
 * call still pairs with its result, the chain verifies; and `turnlog.redact_message` refuses (22023,
 * nothing written) a hand-made placeholder that uses the new `custom` member to keep or smuggle content
 * (the original input, an extra key, another name, a `custom` the call did not have). Migration 0009
 * itself replaces a function that lacks the rule.
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from '@jest/globals'
import { verifyChain } from '@turnlog/audit'
import {
  createMessage,
  isRedactedPayload,
  newEventId,
  redactedPayload,
  toWire,
  toolPairing,
  type ChatMessage,
  type Message,
  type SessionId,
} from '@turnlog/core'
import { migrateToLatest, type PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, useTestStoreOfKind } from '@turnlog/testing'
import { sql } from 'kysely'

const SECRET_INPUT = 'SELECT iban FROM customers WHERE name = ’Jane Doe’'
const SECRET_RESULT = 'DE89 3704 0044 0532 0130 00'

const customCall = {
  role: 'assistant',
  content: null,
  tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: SECRET_INPUT } }],
} as const satisfies ChatMessage

/**
 * A tool call as OpenAI's chat completions API takes it in an assistant message: exactly `{ id, type:
 * 'function', function: { name, arguments } }` or `{ id, type: 'custom', custom: { name, input } }`, every
 * leaf a string (`ChatCompletionMessageToolCall`; a call without its `function` / `custom` is refused).
 */
function isOpenAIToolCall(call: unknown): boolean {
  if (typeof call !== 'object' || call === null || Array.isArray(call)) return false
  const c = call as Record<string, unknown>
  const member = c['type'] === 'function' ? 'function' : c['type'] === 'custom' ? 'custom' : undefined
  if (member === undefined || typeof c['id'] !== 'string') return false
  if (Object.keys(c).sort().join() !== ['id', member, 'type'].sort().join()) return false
  const inner = c[member]
  if (typeof inner !== 'object' || inner === null || Array.isArray(inner)) return false
  const fields = member === 'function' ? ['arguments', 'name'] : ['input', 'name']
  const i = inner as Record<string, unknown>
  return Object.keys(i).sort().join() === fields.join() && fields.every((f) => typeof i[f] === 'string')
}

/** The SQLSTATE a query fails with ('ok' when it does not). */
async function sqlState(query: Promise<unknown>): Promise<string> {
  try {
    await query
    return 'ok'
  } catch (error) {
    return String((error as { code?: unknown }).code)
  }
}

describe.each(STORE_KINDS)('redaction of an OpenAI custom tool call (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  /** The stored payload of every content event of `sid`'s message `id`, as text. */
  async function storedPayloads(sid: SessionId, id: string): Promise<string[]> {
    const { rows } = await sql<{ payload: string }>`
      select payload::text as payload from turnlog.events
       where session_id = ${sid} and message_id = ${id} and content_hash is not null order by seq`.execute(store.db)
    return rows.map((r) => r.payload)
  }

  /** A session: question, the custom call, its result, an answer. */
  async function conversation(): Promise<{ sid: SessionId; call: Message; result: Message }> {
    const sid = await store.createSession()
    const call = createMessage(customCall)
    const result = createMessage({ role: 'tool', tool_call_id: 'call_sql_1', content: SECRET_RESULT })
    await store.append(sid, [
      createMessage({ role: 'user', content: 'What is Jane’s IBAN?' }),
      call,
      result,
      createMessage({ role: 'assistant', content: 'It is on file.' }),
    ])
    return { sid, call, result }
  }

  it('store.redact keeps custom { name, input: "[redacted]" }; toWire sends an OpenAI-valid call; pairing and the chain hold', async () => {
    // given
    const { sid, call, result } = await conversation()

    // when the call, then its result, are redacted
    await store.redact(sid, call.id, { reason: 'erasure request' })
    const afterCall = await store.load(sid)
    await store.redact(sid, result.id)
    const loaded = await store.load(sid)

    // then the stored placeholder keeps the call's id, type and custom name, and none of the input
    const expected = {
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: '[redacted]' } }],
    }
    expect(loaded.messages[1]?.payload).toEqual(expected)
    const stored = await storedPayloads(sid, call.id)
    expect(stored.map((p) => JSON.parse(p) as unknown)).toEqual([expected])
    expect(stored.join()).not.toContain('iban')
    expect(isRedactedPayload(JSON.parse(stored[0] ?? 'null'), 'openai-chat')).toBe(true)

    // and the wire copy of the session, after each redaction, is one OpenAI accepts, with no content
    for (const messages of [afterCall.messages, loaded.messages]) {
      const wire = toWire(messages)
      const calls = wire.flatMap((m) => ('tool_calls' in m && Array.isArray(m.tool_calls) ? (m.tool_calls as unknown[]) : []))
      expect(calls).toHaveLength(1)
      expect(calls.every(isOpenAIToolCall)).toBe(true)
      expect(JSON.stringify(wire)).not.toContain('iban')
      // and the call still pairs with its result
      expect(toolPairing(messages)).toMatchObject({ ok: true, unanswered: [], orphans: [] })
    }
    expect(JSON.stringify(toWire(loaded.messages))).not.toContain('DE89')

    // and the chain verifies over both scrubs
    const verified = await verifyChain(store, sid)
    expect(verified.breaks).toEqual([])
    expect(verified.ok).toBe(true)

    // and a second redaction is a no-op
    await store.redact(sid, call.id)
    expect((await store.load(sid)).messages[1]?.payload).toEqual(expected)
  })

  it.each<[string, object, unknown]>([
    [
      'the original input kept in custom.input',
      customCall,
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: SECRET_INPUT } }],
      },
    ],
    [
      'an extra key inside custom',
      customCall,
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: '[redacted]', note: '[redacted]' } }],
      },
    ],
    [
      'content as an extra key of custom',
      customCall,
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: '[redacted]', [SECRET_INPUT]: null } }],
      },
    ],
    [
      'an input of "{}" (the marker of emptied function arguments, which placeholder_follows alone takes)',
      customCall,
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'run_sql', input: '{}' } }],
      },
    ],
    [
      'another tool name',
      customCall,
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: 'transfer_funds', input: '[redacted]' } }],
      },
    ],
    [
      'a name that is an object of content',
      customCall,
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [{ id: 'call_sql_1', type: 'custom', custom: { name: { text: SECRET_INPUT }, input: '[redacted]' } }],
      },
    ],
    [
      'a custom member added to a function call',
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' } }] },
      {
        role: 'assistant',
        content: '[redacted]',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{}' }, custom: { name: 'x', input: '[redacted]' } },
        ],
      },
    ],
  ])('turnlog.redact_message refuses a hand-made placeholder with %s (22023, nothing written)', async (_, original, forged) => {
    // given a session holding the original
    const sid = await store.createSession()
    const message = createMessage(original as ChatMessage)
    await store.append(sid, [message])
    const before = await storedPayloads(sid, message.id)

    // when the function is called around the store with the forged placeholder
    const state = await sqlState(
      sql`select * from turnlog.redact_message(${sid}::uuid, ${message.id}::uuid, ${JSON.stringify([{ sessionId: sid, seq: 1 }])}::json,
            ${JSON.stringify([forged])}::json, '[]'::json, '[]'::json, ${JSON.stringify({ [sid]: newEventId() })}::json, null)`.execute(
        store.db,
      ),
    )

    // then it is refused and nothing is scrubbed
    expect(state).toBe('22023')
    expect(await storedPayloads(sid, message.id)).toEqual(before)
    expect((await store.load(sid)).version).toBe(1)

    // and the store's own redaction of the message still works
    await store.redact(sid, message.id)
    expect((await store.load(sid)).messages[0]?.payload).toEqual(redactedPayload(original))
  })

  it('turnlog.is_redaction_placeholder answers as isRedactedPayload for custom call shapes', async () => {
    // given
    const call = (custom: unknown): unknown => ({
      role: 'assistant',
      content: '[redacted]',
      tool_calls: [{ id: 'c1', type: 'custom', custom }],
    })
    const candidates = [
      redactedPayload(customCall),
      call({ name: 'run_sql', input: '[redacted]' }),
      { role: 'assistant', content: '[redacted]', tool_calls: [{ id: 'c1', type: 'custom' }] },
      call({ name: 'run_sql', input: SECRET_INPUT }),
      call({ name: 'run_sql', input: '' }),
      call({ name: 'run_sql', input: '{}' }),
      call({ name: 'run_sql' }),
      call({ input: '[redacted]' }),
      call({ name: 7, input: '[redacted]' }),
      call({ name: 'run_sql', input: '[redacted]', x: null }),
      call({ name: 'run_sql', input: ['[redacted]'] }),
      call('[redacted]'),
      call([]),
      call(null),
    ]

    // when
    const { rows } = await sql<{ ok: boolean | null }>`
      select turnlog.is_redaction_placeholder(turnlog.json_operable(p.value), 'openai-chat') as ok
        from json_array_elements(${JSON.stringify(candidates)}::json) with ordinality as p(value, i) order by i`.execute(store.db)

    // then
    expect(rows.map((r) => r.ok === true)).toEqual(candidates.map((c) => isRedactedPayload(c, 'openai-chat')))
    expect(rows.map((r) => r.ok === true)).toEqual([true, true, true, ...candidates.slice(3).map(() => false)])
  })

  it('migration 0009 replaces an is_redaction_placeholder without the rule', async () => {
    // given the function as the release before 0008 had it (no custom member), and 0009 (and 0010 after it) not recorded
    const old = readFileSync(new URL('../fixtures/release-13da962/functions/is_redaction_placeholder.sql', import.meta.url), 'utf8')
    await sql.raw(old.replace(/^create function /m, 'create or replace function ')).execute(store.db)
    await sql`delete from turnlog.schema_migrations where name >= '0009'`.execute(store.db)
    const ask = async (): Promise<boolean | null> =>
      (
        await sql<{
          ok: boolean | null
        }>`select turnlog.is_redaction_placeholder(${JSON.stringify(redactedPayload(customCall))}::json, null) as ok`.execute(store.db)
      ).rows[0]?.ok ?? null
    expect(await ask()).toBe(false)

    // when
    const { applied } = await migrateToLatest(store.db)

    // then
    expect(applied).toEqual(['0009_keep_custom_tool_calls', '0010_hide_foreign_predecessors'])
    expect(await ask()).toBe(true)
    const { rows } = await sql<{ owner: string }>`
      select pg_get_userbyid(p.proowner)::text as owner from pg_proc p join pg_namespace n on n.oid = p.pronamespace
       where n.nspname = 'turnlog' and p.proname = 'is_redaction_placeholder'`.execute(store.db)
    expect(rows).toEqual([{ owner: 'turnlog_owner' }])
  })
})
