import { describe, expect, it } from '@jest/globals'
import { audit } from '@turnlog/audit'
import { createMessage, toWire, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import fc from 'fast-check'

/** What one format's store round trip needs: its name, a payload arbitrary, and sequences the audit must flag. */
export interface FormatRoundTripSpec {
  readonly format: string
  readonly payloadArb: fc.Arbitrary<object>
  readonly runs: number
  /** A sequence with one unanswered call (its id) and the position of the calling message. */
  readonly unanswered: { readonly payloads: readonly object[]; readonly toolCallId: string; readonly at: number }
  /** A sequence with one result that answers nothing earlier (or, where the format cannot have one, a second result), its kind and position. */
  readonly orphan: {
    readonly payloads: readonly object[]
    readonly toolCallId: string
    readonly at: number
    readonly kind: 'orphan_tool_result' | 'duplicate_tool_result'
  }
}

/**
 * The store round trip of a message format on Postgres and PGlite: append → load → toWire equals the
 * input exactly (generated payloads: NUL, lone surrogates, unknown kinds), and the audit finds an
 * unanswered call and an orphan result, naming the format.
 */
export function describeFormatRoundTrip(spec: FormatRoundTripSpec): void {
  const backends = [
    ['Postgres', 'postgres'],
    ['PGlite', 'pglite'],
  ] as const
  describe.each(backends)(`${spec.format} in the store (%s)`, (_name, kind) => {
    let store: PostgresStore
    useTestStoreOfKind(kind, (t) => ({ store } = t), { pool: { max: 2 } })

    it('append → load → toWire round-trips generated payloads exactly, with the format kept', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(spec.payloadArb, { minLength: 1, maxLength: 4 }), async (payloads) => {
          const messages: Message<unknown>[] = payloads.map((p) => createMessage(p, { format: spec.format }))
          const sid = await store.createSession()
          // the store's append is typed for chat messages; it accepts any registered format at run time
          await store.append(sid, messages as Message[])
          const loaded = (await store.load(sid)).messages as Message<unknown>[]
          expect(loaded.map((m) => m.format)).toEqual(messages.map(() => spec.format))
          expect(JSON.stringify(toWire(loaded))).toBe(JSON.stringify(payloads))
          expect(JSON.stringify(toWire(loaded, { repairPairing: true }))).toBe(JSON.stringify(toWire(messages, { repairPairing: true })))
        }),
        { numRuns: spec.runs },
      )
    }, 300_000)

    it('the audit finds the unanswered call and the orphan result (a second result where the format has no orphans), naming the format; the repaired wire copy has neither', async () => {
      for (const [sequence, kind] of [
        [spec.unanswered, 'unanswered_tool_call'],
        [spec.orphan, spec.orphan.kind],
      ] as const) {
        const messages: Message<unknown>[] = sequence.payloads.map((p) => createMessage(p, { format: spec.format }))
        const sid = await store.createSession()
        await store.append(sid, messages as Message[])
        const report = await audit(store, sid)
        const found = report.findings.filter(
          (f) => f.kind === 'unanswered_tool_call' || f.kind === 'orphan_tool_result' || f.kind === 'duplicate_tool_result',
        )
        expect(found).toEqual([
          expect.objectContaining({ kind, sessionId: sid, evidence: { toolCallId: sequence.toolCallId, format: spec.format } }),
        ])
        expect(found[0]?.messageIds).toContain(messages[sequence.at]?.id)
        // the repaired copy, stored as a new session, audits clean of pairing findings
        const repaired: Message<unknown>[] = (
          toWire((await store.load(sid)).messages as Message<unknown>[], { repairPairing: true }) as object[]
        ).map((p) => createMessage(p, { format: spec.format }))
        const clean = await store.createSession()
        await store.append(clean, repaired as Message[])
        const after = await audit(store, clean)
        expect(after.findings.filter((f) => f.kind.endsWith('tool_call') || f.kind.endsWith('tool_result'))).toEqual([])
      }
    }, 120_000)
  })
}
