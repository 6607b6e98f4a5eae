import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { audit } from '@turnlog/audit'
import {
  createMessage,
  INTERRUPTED_TOOL_RESULT,
  openAIAgentsFormat,
  toolPairing,
  toWire,
  type Message,
  type SessionStore,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { openAIAgentsItemArb, openAIAgentsCallArb, createTestDatabase, type TestDatabase } from '@turnlog/testing'

// append → load → toWire of openai-agents payloads, and the audit of their pairing, on Postgres and PGlite.
const FORMAT = 'openai-agents'
const RUNS = { postgres: Number(process.env['TURNLOG_PROP_RUNS'] ?? 60), pglite: Number(process.env['TURNLOG_PGLITE_PROP_RUNS'] ?? 30) }

let db: TestDatabase
const stores: { name: 'postgres' | 'pglite'; store: PostgresStore }[] = []

beforeAll(async () => {
  db = await createTestDatabase()
  stores.push({ name: 'postgres', store: await openStore({ connectionString: db.connectionString }) })
  stores.push({ name: 'pglite', store: await openStore({ embedded: true }) })
}, 120_000)

afterAll(async () => {
  for (const { store } of stores) await store.close()
  await db.drop()
})

const message = (payload: object): Message<unknown> => createMessage(payload, { format: FORMAT })

describe.each(['postgres', 'pglite'] as const)('openai-agents payloads through the store (%s)', (name) => {
  // typed as the port: append takes messages of any format
  const store = (): SessionStore => stores.find((s) => s.name === name)!.store

  it('append → load → toWire gives every payload back exactly (NUL, lone surrogates, unknown fields and kinds), format kept', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(openAIAgentsItemArb, { minLength: 1, maxLength: 6 }), async (payloads) => {
        // given
        const messages = payloads.map(message)
        const sid = await store().createSession()

        // when
        await store().append(sid, messages)
        const loaded = (await store().load(sid)).messages as Message<unknown>[]

        // then
        expect(loaded.map((m) => [m.id, m.format])).toEqual(messages.map((m) => [m.id, FORMAT]))
        expect(JSON.stringify(toWire(loaded))).toBe(JSON.stringify(payloads))
        expect(toWire(loaded)).toEqual(payloads)
        expect(JSON.stringify(toWire(loaded, { repairPairing: true }))).toBe(JSON.stringify(toWire(messages, { repairPairing: true })))
      }),
      { numRuns: RUNS[name] },
    )
  }, 600_000)

  it("audit finds an unanswered call and an orphan result, naming the format; toWire repairs both in the format's own shape", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(openAIAgentsItemArb, { maxLength: 3 }), openAIAgentsCallArb, async (before, call) => {
        // given: items, a call nothing answers, then a result of a call never made
        const [callId] = openAIAgentsFormat.toolCalls(call)
        const orphanId = `${callId ?? 'none'}:orphan`
        const orphan = openAIAgentsFormat.interruptedResults([orphanId], 'late result', call)[0]!
        const messages = [...before.map(message), message(call), message(orphan)]
        const sid = await store().createSession()
        await store().append(sid, messages)

        // when
        const report = await audit(store(), sid)
        const { messages: loaded } = await store().load(sid)
        const wire = toWire(loaded as Message<unknown>[], { repairPairing: true })

        // then
        const evidence = report.findings
          .filter((f) => f.kind === 'unanswered_tool_call' || f.kind === 'orphan_tool_result')
          .map((f) => [f.kind, f.messageIds, f.evidence])
        expect(evidence).toContainEqual(['unanswered_tool_call', [messages.at(-2)!.id], { toolCallId: callId, format: FORMAT }])
        expect(evidence).toContainEqual(['orphan_tool_result', [messages.at(-1)!.id], { toolCallId: orphanId, format: FORMAT }])
        const repaired = toolPairing(wire.map((p) => message(p as object)))
        expect(repaired.unanswered).toEqual([])
        expect(repaired.orphans).toEqual([])
        expect(wire).not.toContainEqual(orphan)
        expect(wire).toContainEqual(openAIAgentsFormat.interruptedResults([callId!], INTERRUPTED_TOOL_RESULT, call)[0])
      }),
      { numRuns: RUNS[name] },
    )
  }, 600_000)
})
