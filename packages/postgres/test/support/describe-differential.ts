/**
 * The differential suite (SQL projection against `projectStructure`), declared once for every database
 * it runs on: per rule, a property over store histories; a property over logs written around the store;
 * the divergences it once found (regression tests); one full rebuild of every session.
 */
import { afterAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import type { PostgresStore } from '@turnlog/postgres'
import {
  anomalousEvents,
  anomalousLogArb,
  runAnomalousLog,
  CROWDED_COMPACTION,
  FINALIZED_PENDING_SUMMARY,
  KNOWN_DIVERGENCE,
  RULES,
  historyFor,
  newDiffStats,
  rawEvents,
  rawLogArb,
  rebuildAllAgainstSpec,
  runDifferential,
  runRawLog,
  type AnomalyStats,
} from './structure-differential.js'

/** Declares the suite under `label`, on the store `store()` returns once `beforeAll` has opened it. */
export function describeDifferential(label: string, store: () => PostgresStore, numRuns: number): void {
  const stats = newDiffStats()
  const anomalyStats: AnomalyStats = { refused: {}, sessions: new Set(), compared: 0, anomalies: 0 }
  afterAll(() => {
    console.log(
      `projection-differential (${label}): ${JSON.stringify(stats)}; logs with anomalies: ${JSON.stringify({ ...anomalyStats, sessions: anomalyStats.sessions.size })}`,
    )
  })

  describe(`SQL projection = projectStructure, rule by rule (${label})`, () => {
    it.each(RULES)(
      '%s: after every store call the table is the spec of the stored events; fold and rebuild agree',
      async (rule) => {
        const before = { ...stats.events }
        await fc.assert(
          fc.asyncProperty(historyFor(rule), async (commands) => {
            await runDifferential(store(), commands, stats)
          }),
          { numRuns },
        )
        // the histories did write the rule's event type (and at least three types, for the mix)
        const written = (type: string): number => (stats.events[type] ?? 0) - (before[type] ?? 0)
        expect(rule === 'mixed' ? Object.keys(stats.events).filter((t) => written(t) > 0).length : written(rule)).toBeGreaterThan(
          rule === 'mixed' ? 2 : 0,
        )
      },
      300_000,
    )

    it('logs written around the store (any history the spec applies without an anomaly, several events per INSERT): the table is the spec after every statement, and after rebuild', async () => {
      await fc.assert(
        fc.asyncProperty(rawLogArb, async ({ steps, chunks }) => {
          await runRawLog(store(), rawEvents(steps), chunks)
        }),
        { numRuns: numRuns * 4 },
      )
    }, 300_000)

    // regression: the statement trigger once inserted a statement's plain appends before applying its other
    // events, so a compaction covering nothing placed its summary after an append that follows it
    it('regression (found by the raw-log differential): a compaction covering nothing live, then an append in the same INSERT, is projected as the spec says', async () => {
      await runRawLog(store(), rawEvents(KNOWN_DIVERGENCE.steps, { emptyCompactions: true }), KNOWN_DIVERGENCE.chunks)
    })

    it('regression (found by the raw-log differential): a compaction placing more summaries than it covers, after a live append that followed them, then an append: positions stay strictly increasing', async () => {
      await runRawLog(store(), rawEvents(CROWDED_COMPACTION.steps), CROWDED_COMPACTION.chunks)
      // the same in one INSERT, and split after the compaction
      await runRawLog(store(), rawEvents(CROWDED_COMPACTION.steps), [6])
      await runRawLog(store(), rawEvents(CROWDED_COMPACTION.steps), [5, 1])
    })

    it('regression (found by the raw-log differential): a summary finalized while pending is placed final', async () => {
      await runRawLog(store(), rawEvents(FINALIZED_PENDING_SUMMARY.steps), FINALIZED_PENDING_SUMMARY.chunks)
      // the finalize and the compaction in one INSERT; the whole log in one
      await runRawLog(store(), rawEvents(FINALIZED_PENDING_SUMMARY.steps), [1, 3])
      await runRawLog(store(), rawEvents(FINALIZED_PENDING_SUMMARY.steps), [4])
    })

    it('raw logs with compactions that cover nothing, in multi-event INSERTs: the table is the spec after every statement', async () => {
      await fc.assert(
        fc.asyncProperty(rawLogArb, async ({ steps, chunks }) => {
          await runRawLog(store(), rawEvents(steps, { emptyCompactions: true }), chunks)
        }),
        { numRuns: numRuns * 2 },
      )
    }, 300_000)

    it('logs with anomalies (ids re-used or unknown, summaries not pending, odd `deferred` values, fork markers, unknown types), several events per INSERT: each statement is refused or the table is the spec (which skips an anomaly), after every statement and after rebuild', async () => {
      await fc.assert(
        fc.asyncProperty(anomalousLogArb, async ({ steps, chunks, fork }) => {
          await runAnomalousLog(store(), anomalousEvents(steps), chunks, anomalyStats, fork)
        }),
        { numRuns: numRuns * 4 },
      )
      // the property met both outcomes, and logs the spec applied with anomalies; a refusal is a key's
      // (schema.md, live_messages: 23505, on message_ids_pkey or live_messages_pkey) or the claim
      // trigger's (TLA01: a copy outside a fork, an id a fork session holds), never another error
      expect(anomalyStats.compared).toBeGreaterThan(numRuns)
      expect(anomalyStats.anomalies).toBeGreaterThan(0)
      const refusals = Object.keys(anomalyStats.refused)
      expect(refusals.length).toBeGreaterThan(0)
      expect(refusals.filter((r) => r !== '23505 message_ids_pkey' && r !== '23505 live_messages_pkey' && r !== 'TLA01 undefined')).toEqual(
        [],
      )
      expect(anomalyStats.refused['TLA01 undefined']).toBeGreaterThan(0)
    }, 300_000)

    it('one full rebuild of every session from damaged rows (batches mixing plain-append and replayed logs) gives the spec', async () => {
      await rebuildAllAgainstSpec(store(), anomalyStats.sessions)
    }, 120_000)
  })
}
