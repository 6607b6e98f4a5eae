import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { audit } from '@turnlog/audit'
import {
  createMessage,
  INTERRUPTED_TOOL_RESULT,
  toolPairing,
  toWire,
  type Message,
  type MessageFormat,
  type SessionStore,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, openTestStore, type TestDatabase } from '@turnlog/testing'

/** A format of one item per message whose calls an arbitrary can generate (openai-responses, openai-agents). */
export interface ItemFormatRoundTripSpec<P extends object> {
  readonly format: string
  readonly formatObject: MessageFormat<P>
  readonly itemArb: fc.Arbitrary<P>
  readonly callArb: fc.Arbitrary<P>
}

/**
 * append → load → toWire of an item format's generated payloads, and the audit of their pairing (an
 * unanswered generated call, an orphan result of the format's own shape), on Postgres and PGlite.
 */
export function describeItemFormatRoundTrip<P extends object>(spec: ItemFormatRoundTripSpec<P>): void {
  const RUNS = { postgres: Number(process.env['TURNLOG_PROP_RUNS'] ?? 60), pglite: Number(process.env['TURNLOG_PGLITE_PROP_RUNS'] ?? 30) }

  let db: TestDatabase
  const stores: { name: 'postgres' | 'pglite'; store: PostgresStore; close: () => Promise<void> }[] = []

  beforeAll(async () => {
    db = await createTestDatabase({ migrated: true })
    const postgres = await openStore({ connectionString: db.connectionString })
    stores.push({ name: 'postgres', store: postgres, close: () => postgres.close() })
    const { store, close } = await openTestStore('pglite')
    stores.push({ name: 'pglite', store, close })
  }, 120_000)

  afterAll(async () => {
    for (const { close } of stores) await close()
    await db.drop()
  })

  const message = (payload: object): Message<unknown> => createMessage(payload, { format: spec.format as never })

  describe.each(['postgres', 'pglite'] as const)(`${spec.format} payloads through the store (%s)`, (name) => {
    // typed as the port: append takes messages of any format
    const store = (): SessionStore => stores.find((s) => s.name === name)!.store

    it('append → load → toWire gives every payload back exactly (NUL, lone surrogates, unknown fields and kinds), format kept', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(spec.itemArb, { minLength: 1, maxLength: 6 }), async (payloads) => {
          // given
          const messages = payloads.map(message)
          const sid = await store().createSession()

          // when
          await store().append(sid, messages)
          const loaded = (await store().load(sid)).messages as Message<unknown>[]

          // then
          expect(loaded.map((m) => [m.id, m.format])).toEqual(messages.map((m) => [m.id, spec.format]))
          expect(JSON.stringify(toWire(loaded))).toBe(JSON.stringify(payloads))
          expect(toWire(loaded)).toEqual(payloads)
          expect(JSON.stringify(toWire(loaded, { repairPairing: true }))).toBe(JSON.stringify(toWire(messages, { repairPairing: true })))
        }),
        { numRuns: RUNS[name] },
      )
    }, 600_000)

    it("audit finds an unanswered call and an orphan result, naming the format; toWire repairs both in the format's own shape", async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(spec.itemArb, { maxLength: 3 }), spec.callArb, async (before, call) => {
          // given: items, a call nothing answers, then a result of a call never made
          const [callId] = spec.formatObject.toolCalls(call)
          const orphanId = `${callId ?? 'none'}:orphan`
          const orphan = spec.formatObject.interruptedResults([orphanId], 'late result', call)[0]!
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
          expect(evidence).toContainEqual(['unanswered_tool_call', [messages.at(-2)!.id], { toolCallId: callId, format: spec.format }])
          expect(evidence).toContainEqual(['orphan_tool_result', [messages.at(-1)!.id], { toolCallId: orphanId, format: spec.format }])
          const repaired = toolPairing(wire.map((p) => message(p as object)))
          expect(repaired.unanswered).toEqual([])
          expect(repaired.orphans).toEqual([])
          expect(wire).not.toContainEqual(orphan)
          expect(wire).toContainEqual(spec.formatObject.interruptedResults([callId!], INTERRUPTED_TOOL_RESULT, call)[0])
        }),
        { numRuns: RUNS[name] },
      )
    }, 600_000)
  })
}
