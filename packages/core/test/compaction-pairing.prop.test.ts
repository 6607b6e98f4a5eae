/**
 * Properties of the rule `compact` refuses by (`compactionPairingSplits`), over random live lists with
 * tool pairs and random covered sets, against oracles that share nothing with it but `toolPairing`:
 * - any list (orphans, unanswered calls, duplicates and reused ids from a pool of three call ids): a
 *   compaction it accepts leaves no message in an orphan or unanswered-call fault it was not in before;
 * - a well-formed list (every call answered once, ids unique): it refuses exactly when a call message
 *   and its result message end on different sides of the covered set, which is exactly when the list
 *   after the compaction is no longer paired.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, toolPairing, type Message, type ToolPairing } from '@turnlog/core'
import { compactionPairingSplits } from '@turnlog/core/internal'

const summary = (): Message => createMessage({ role: 'user', content: '[CONTEXT COMPACTION] summary' })
const call = (ids: readonly string[]): Message =>
  createMessage({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
  })
const result = (id: string): Message => createMessage({ role: 'tool', tool_call_id: id, content: 'ok' })
const text = (): Message => createMessage({ role: 'user', content: 'hi' })

/** The list after a compaction, placed by hand (summary where the first covered message was). */
function compacted(live: readonly Message[], covered: ReadonlySet<string>, s: readonly Message[]): Message[] {
  const at = live.findIndex((m) => covered.has(m.id))
  return [...live.slice(0, at).filter((m) => !covered.has(m.id)), ...s, ...live.slice(at).filter((m) => !covered.has(m.id))]
}

/** Every (call id, message) in any fault `toolPairing` reports. */
function faulty(p: ToolPairing): Set<string> {
  const out = new Set<string>()
  for (const u of p.unanswered) out.add(JSON.stringify([u.toolCallId, u.messageId]))
  for (const o of p.orphans) out.add(JSON.stringify([o.toolCallId, o.messageId]))
  for (const d of [...p.duplicates, ...p.duplicateCalls]) for (const m of d.messageIds) out.add(JSON.stringify([d.toolCallId, m]))
  return out
}

const poolId = fc.constantFrom('a', 'b', 'c')
const anyMessage = fc.oneof(
  fc.constant(null).map(() => text()),
  fc.array(poolId, { minLength: 1, maxLength: 2 }).map((ids) => call(ids)),
  poolId.map((id) => result(id)),
)
/** A list and a non-empty covered subset of it. */
const anyCase = fc
  .array(anyMessage, { minLength: 1, maxLength: 12 })
  .chain((live) => fc.tuple(fc.constant(live), fc.subarray(live, { minLength: 1 })))

/** A well-formed conversation: turns of text or a call with 1–2 unique ids, each answered once (results in any order). */
const wellFormed = fc.array(fc.oneof(fc.constant(0), fc.constant(1), fc.constant(2)), { minLength: 1, maxLength: 8 }).chain((turns) => {
  let n = 0
  const live: Message[] = []
  const pairs: [Message, Message][] = []
  for (const t of turns) {
    if (t === 0) {
      live.push(text())
      continue
    }
    const ids = Array.from({ length: t }, () => `call_${n++}`)
    const c = call(ids)
    const results = ids.map((id) => result(id))
    live.push(c, ...results.reverse())
    for (const r of results) pairs.push([c, r])
  }
  return fc.tuple(fc.constant(live), fc.constant(pairs), fc.subarray(live, { minLength: 1 }))
})

describe('compactionPairingSplits (properties)', () => {
  it('an accepted compaction of any list leaves no message in an orphan or unanswered fault it was not in before', () => {
    fc.assert(
      fc.property(anyCase, ([live, coveredList]) => {
        // given
        const covered = new Set(coveredList.map((m) => m.id))
        const s = [summary()]

        // when
        const found = compactionPairingSplits(live, { covered: [...covered], summary: s })

        // then
        const before = faulty(toolPairing(live))
        const after = toolPairing(compacted(live, covered, s))
        const fresh = [
          ...after.orphans.map((o) => [o.toolCallId, o.messageId]),
          ...after.unanswered.map((u) => [u.toolCallId, u.messageId]),
        ].filter((k) => !before.has(JSON.stringify(k)))
        if (found.length === 0) expect(fresh).toEqual([])
        // a refusal names live messages that are not covered, and covered partners that are
        for (const split of found) {
          expect(split.messageIds.every((m) => !covered.has(m))).toBe(true)
          expect(split.coveredMessageIds.every((m) => covered.has(m))).toBe(true)
        }
      }),
      { numRuns: 2000 },
    )
  })

  it('a well-formed list: refused exactly when a call and its result are on different sides, exactly when the list after is no longer paired', () => {
    fc.assert(
      fc.property(wellFormed, ([live, pairs, coveredList]) => {
        // given
        const covered = new Set(coveredList.map((m) => m.id))
        const s = [summary()]

        // when
        const found = compactionPairingSplits(live, { covered: [...covered], summary: s })

        // then
        const split = pairs.some(([c, r]) => covered.has(c.id) !== covered.has(r.id))
        expect(found.length > 0).toBe(split)
        expect(toolPairing(compacted(live, covered, s)).ok).toBe(!split)
      }),
      { numRuns: 2000 },
    )
  })
})
