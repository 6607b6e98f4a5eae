/**
 * Redaction of a message of every format, on Postgres and on PGlite: the placeholder is a payload of
 * the message's format (`redactedPayload(payload, format)`) that keeps its tool-call ids, so a redacted
 * result still answers its call; the chain verifies, the audit is clean, and an export imports and
 * verifies elsewhere.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { audit, exportSessions, importEvents, verifyChain } from '@turnlog/audit'
import {
  AI_SDK_MODEL_FORMAT,
  AI_SDK_UI_FORMAT,
  ANTHROPIC_FORMAT,
  JSON_FORMAT,
  OPENAI_AGENTS_FORMAT,
  OPENAI_RESPONSES_FORMAT,
  createMessage,
  isRedactedPayload,
  parseFormatPayload,
  redactedPayload,
  type Message,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, openTestStore, type TestDatabase } from '@turnlog/testing'
import { runSql } from '../security/support/security-fixtures.js'

const SECRET = 'DE89-3704-SECRET'

/** Per format: a user turn, a call, its result and an answer, each carrying the secret. */
const CONVERSATIONS: readonly (readonly [string, readonly object[]])[] = [
  [
    OPENAI_RESPONSES_FORMAT,
    [
      { role: 'user', content: `my IBAN is ${SECRET}` },
      { type: 'function_call', call_id: 'call_1', name: 'lookup_iban', arguments: JSON.stringify({ iban: SECRET }) },
      { type: 'function_call_output', call_id: 'call_1', output: `{"iban":"${SECRET}","balance":12}` },
      { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `balance of ${SECRET}: 12`, annotations: [] }] },
    ],
  ],
  [
    OPENAI_AGENTS_FORMAT,
    [
      { role: 'user', content: `my IBAN is ${SECRET}` },
      { type: 'function_call', callId: 'call_1', name: 'lookup_iban', arguments: JSON.stringify({ iban: SECRET }) },
      { type: 'function_call_result', callId: 'call_1', name: 'lookup_iban', status: 'completed', output: { type: 'text', text: SECRET } },
      { role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: `balance of ${SECRET}: 12` }] },
    ],
  ],
  [
    ANTHROPIC_FORMAT,
    [
      { role: 'user', content: `my IBAN is ${SECRET}` },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: `checking ${SECRET}` },
          { type: 'tool_use', id: 'toolu_1', name: 'lookup_iban', input: { iban: SECRET } },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'toolu_1', content: `balance of ${SECRET}: 12` },
          { type: 'text', text: `and ${SECRET}?` },
        ],
      },
      { role: 'assistant', content: `balance of ${SECRET}: 12` },
    ],
  ],
  [
    AI_SDK_UI_FORMAT,
    [
      { id: 'u1', role: 'user', parts: [{ type: 'text', text: `my IBAN is ${SECRET}` }] },
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          {
            type: 'tool-lookup',
            toolCallId: 'call_1',
            state: 'output-available',
            input: { iban: SECRET },
            output: { balance: 12, iban: SECRET },
          },
        ],
      },
      { id: 'a2', role: 'assistant', parts: [{ type: 'text', text: `balance of ${SECRET}: 12` }] },
    ],
  ],
  [
    AI_SDK_MODEL_FORMAT,
    [
      { role: 'user', content: `my IBAN is ${SECRET}` },
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'call_1', toolName: 'lookupIban', input: { iban: SECRET } }] },
      {
        role: 'tool',
        content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'lookupIban', output: { type: 'text', value: SECRET } }],
      },
      { role: 'assistant', content: `balance of ${SECRET}: 12` },
    ],
  ],
  [
    JSON_FORMAT,
    [
      { note: `IBAN ${SECRET}`, amount: 12 },
      { list: [SECRET], name: SECRET, id: SECRET },
    ],
  ],
]

let db: TestDatabase
const stores: { name: string; store: PostgresStore; close: () => Promise<void> }[] = []
let target: PostgresStore
let closeTarget: (() => Promise<void>) | undefined

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  const postgres = await openStore({ connectionString: db.connectionString, pool: { max: 2 } })
  stores.push({ name: 'Postgres', store: postgres, close: () => postgres.close() })
  const { store, close } = await openTestStore('pglite')
  stores.push({ name: 'PGlite', store, close })
  ;({ store: target, close: closeTarget } = await openTestStore('pglite'))
}, 300_000)

afterAll(async () => {
  for (const { close } of stores) await close()
  await closeTarget?.()
  await db?.drop()
})

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const l of lines) out.push(l)
  return out
}

describe.each(['Postgres', 'PGlite'])('redaction of every format (%s)', (name) => {
  const store = (): PostgresStore => {
    const found = stores.find((s) => s.name === name)
    if (found === undefined) throw new Error(`no ${name} store`)
    return found.store
  }

  it.each(CONVERSATIONS.map(([format, payloads]) => [format, payloads] as const))(
    '%s: redact → load shows the placeholder, pairing intact, audit clean, export imports and verifies',
    async (format, payloads) => {
      // given a conversation of the format carrying a secret in every message
      const messages: Message<unknown>[] = payloads.map((p) => createMessage(p, { format, meta: { topic: 'bank' } }))
      const sid = await store().createSession()
      await store().append(sid, messages as Message[])
      const pairingBefore = (await store().load(sid)).pairing
      // when every message is redacted
      for (const m of messages) await store().redact(sid, m.id, { reason: 'GDPR' })
      // then the load shows each message's placeholder, a payload of its format, and the pairing is unchanged
      const loaded = await store().load(sid)
      expect(JSON.stringify(loaded)).not.toContain(SECRET)
      const shown = loaded.messages as Message<unknown>[]
      expect(shown.map((m) => m.format)).toEqual(messages.map(() => format))
      expect(shown.map((m) => m.meta)).toEqual(messages.map(() => ({ topic: 'bank' })))
      expect(shown.map((m) => m.payload)).toEqual(messages.map((m) => redactedPayload(m.payload, format)))
      for (const m of shown) {
        expect(isRedactedPayload(m.payload, format)).toBe(true)
        expect(() => parseFormatPayload(m.payload, format)).not.toThrow()
      }
      expect(loaded.pairing).toEqual(pairingBefore)
      // the chain verifies and the audit is clean
      const verification = await verifyChain(store(), sid)
      expect(verification.breaks).toEqual([])
      expect(verification.ok).toBe(true)
      const report = await audit(store(), sid)
      expect(
        report.findings.filter(
          (f) => f.severity === 'critical' || f.kind.includes('chain') || f.kind.includes('redaction') || f.kind.includes('tool_'),
        ),
      ).toEqual([])
      // an export carries no secret, imports into another store and verifies there
      const lines = await collect(exportSessions(store(), { sessionIds: [sid] }))
      expect(lines.join('\n')).not.toContain(SECRET)
      const imported = await importEvents(target, lines)
      expect(imported.sessionIds).toEqual([sid])
      expect((await verifyChain(target, sid)).breaks).toEqual([])
      expect(JSON.stringify((await target.load(sid)).messages)).toBe(JSON.stringify(loaded.messages))
    },
    120_000,
  )
})

describe('turnlog.is_redaction_placeholder (Postgres)', () => {
  it('accepts what redactedPayload makes for every format and refuses content passed as a structural placeholder', async () => {
    const check = async (payload: unknown, format: string | null = OPENAI_RESPONSES_FORMAT): Promise<unknown> =>
      (
        await runSql<{ ok: boolean }>(db.connectionString, 'select turnlog.is_redaction_placeholder($1::json, $2) as ok', [
          JSON.stringify(payload),
          format,
        ])
      )[0]?.ok
    for (const [format, payloads] of CONVERSATIONS) {
      for (const p of payloads)
        expect([format, await check(redactedPayload(parseFormatPayload(p, format), format), format)]).toEqual([format, true])
    }
    for (const forged of [
      { type: 'function_call_output', call_id: 'c1', output: 'I never said that' },
      { type: 'function_call_output', call_id: 'c1', output: { nested: ['I never said that'] } },
      { type: 'function_call_output', call_id: 'c1', output: '[redacted]', n: 42 },
      { type: 'x', type2: 'x' },
      ['[redacted]'],
      '[redacted]',
    ]) {
      expect([forged, await check(forged)]).toEqual([forged, false])
    }
    // a chat message takes only the chat placeholder: no name kept, no structural shape
    expect(await check({ role: 'user', content: '[redacted]' }, null)).toBe(true)
    expect(await check({ role: 'user', content: '[redacted]', name: 'Alice' }, null)).toBe(false)
    expect(await check({ role: 'user', content: '[redacted]', name: 'Alice' }, 'openai-chat')).toBe(false)
    // a duplicate key (the last one wins in JSON.parse) is refused
    expect(
      (
        await runSql<{ ok: boolean }>(
          db.connectionString,
          `select turnlog.is_redaction_placeholder('{"type":"a","output":"[redacted]","output":"secret"}'::json, 'openai-responses') as ok`,
        )
      )[0]?.ok,
    ).toBe(false)
  })
})
