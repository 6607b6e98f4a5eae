/**
 * The `anthropic` format through the store, on Postgres and on PGlite: append → load → toWire gives
 * back exactly what was appended (NUL, lone surrogates, unknown fields and block types, key order),
 * and the audit finds an unanswered `tool_use` and an orphan `tool_result` that `toWire(…,
 * { repairPairing: true })` repairs in the format's own shape.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { audit } from '@turnlog/audit'
import {
  ANTHROPIC_FORMAT,
  INTERRUPTED_TOOL_RESULT,
  createMessage,
  toWire,
  toolPairing,
  type AnthropicMessageParam,
  type Message,
  type MessageId,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { anthropicPayloadArb, createTestDatabase, metaArb, openTestStore, type TestDatabase } from '@turnlog/testing'

const NUM_RUNS = Number(process.env['TURNLOG_FORMAT_PROP_RUNS'] ?? 60)

const anthropic = (payload: AnthropicMessageParam, meta?: { readonly [key: string]: unknown }): Message<AnthropicMessageParam> =>
  createMessage<AnthropicMessageParam>(payload, { format: ANTHROPIC_FORMAT, ...(meta === undefined ? {} : { meta }) })

let db: TestDatabase
const stores: { name: string; store: PostgresStore; close: () => Promise<void> }[] = []

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  const postgres = await openStore({ connectionString: db.connectionString, pool: { max: 2 } })
  stores.push({ name: 'Postgres', store: postgres, close: () => postgres.close() })
  const { store, close } = await openTestStore('pglite')
  stores.push({ name: 'PGlite', store, close })
})

afterAll(async () => {
  for (const { close } of stores) await close()
  await db.drop()
})

describe.each(['Postgres', 'PGlite'])('anthropic format through the store (%s)', (name) => {
  const store = (): PostgresStore => {
    const found = stores.find((s) => s.name === name)
    if (found === undefined) throw new Error(`no ${name} store`)
    return found.store
  }

  it('append → load → toWire round-trips generated payloads exactly, with format and meta', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ payload: anthropicPayloadArb, meta: fc.option(metaArb, { nil: undefined }) }), { minLength: 1, maxLength: 5 }),
        async (specs) => {
          // given
          const messages = specs.map((s) => anthropic(s.payload, s.meta))
          const sid = await store().createSession()

          // when
          await store().append(sid, messages)
          const loaded = (await store().load(sid)).messages as unknown as Message<AnthropicMessageParam>[]

          // then
          expect(loaded.map((m) => [m.id, m.format, m.meta])).toEqual(messages.map((m) => [m.id, 'anthropic', m.meta]))
          expect(JSON.stringify(toWire(loaded))).toBe(JSON.stringify(specs.map((s) => s.payload)))
          expect(JSON.stringify(toWire(loaded, { repairPairing: true }))).toBe(JSON.stringify(toWire(messages, { repairPairing: true })))
          expect((await store().append(sid, loaded)).appended).toEqual([])
        },
      ),
      { numRuns: NUM_RUNS },
    )
  }, 600_000)

  it('the audit finds an unanswered tool_use and an orphan tool_result; repairPairing answers and drops them in Anthropic shape', async () => {
    // given
    const sid = await store().createSession()
    const question = anthropic({ role: 'user', content: 'weather in Oslo and Paris?' })
    const call = anthropic({
      role: 'assistant',
      content: [
        { type: 'text', text: 'Checking.' },
        { type: 'tool_use', id: 'toolu_01Oslo', name: 'get_weather', input: { city: 'Oslo' } },
        { type: 'tool_use', id: 'toolu_01Paris', name: 'get_weather', input: { city: 'Paris' } },
      ],
    })
    const partial = anthropic({ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Oslo', content: '3°C' }] })
    const orphan = anthropic({
      role: 'user',
      content: [
        { type: 'tool_result', tool_use_id: 'toolu_01Nobody', content: 'late' },
        { type: 'text', text: 'and tomorrow?' },
      ],
    })
    await store().append(sid, [question, call, partial, orphan])

    // when
    const report = await audit(store(), sid)
    const { messages, pairing } = await store().load(sid)
    const wire = toWire(messages as unknown as Message<AnthropicMessageParam>[], { repairPairing: true })

    // then: both found, by message and call id, with the format named
    expect(pairing.unanswered).toEqual([{ messageId: call.id, toolCallId: 'toolu_01Paris' }])
    expect(pairing.orphans).toEqual([{ messageId: orphan.id, toolCallId: 'toolu_01Nobody' }])
    expect(
      report.findings.filter((f) => ['unanswered_tool_call', 'orphan_tool_result', 'duplicate_tool_result'].includes(f.kind)),
    ).toHaveLength(2)
    expect(report.findings).toEqual(
      expect.arrayContaining([
        expect.objectContaining({
          kind: 'unanswered_tool_call',
          messageIds: [call.id],
          evidence: { toolCallId: 'toolu_01Paris', format: 'anthropic' },
        }),
        expect.objectContaining({
          kind: 'orphan_tool_result',
          messageIds: [orphan.id],
          evidence: { toolCallId: 'toolu_01Nobody', format: 'anthropic' },
        }),
      ]),
    )

    // then: the repair is Anthropic's own shape: an is_error tool_result user message after the call's results, the orphan block gone
    expect(wire).toEqual([
      question.payload,
      call.payload,
      partial.payload,
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Paris', content: INTERRUPTED_TOOL_RESULT, is_error: true }] },
      { role: 'user', content: [{ type: 'text', text: 'and tomorrow?' }] },
    ])
    expect(toolPairing(wire.map((payload, i) => ({ id: `wire-${i}` as MessageId, payload, format: ANTHROPIC_FORMAT }))).ok).toBe(true)
  })
})
