import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, useTestStore } from '@turnlog/testing'
import { sql } from 'kysely'
import { describeDifferential } from './support/describe-differential.js'
import { historyFor, newDiffStats, runDifferential } from './support/structure-differential.js'

// The SQL projection (turnlog.project_event, the events_project trigger, turnlog.rebuild_sessions)
// against the written spec, projectStructure in core, one rule (event type) at a time: after every
// store call turnlog.live_messages must be projectStructure(the stored events), so a divergence names
// the rule. Sized for CI (2 cores).
const NUM_RUNS = Number(process.env['TURNLOG_PROP_RUNS'] ?? 25)

let store: PostgresStore

useTestStore((t) => ({ store } = t), { pool: { max: 4 } })

describeDifferential('Postgres', () => store, NUM_RUNS)

describe('the differential can fail, and names the rule', () => {
  it('a planted divergence in a test database (SQL message_revised keeps the old event_seq) fails the message_revised property with "rule message_revised"', async () => {
    // given: a database whose turnlog.project_event forgets one rule's event_seq
    const planted = await createTestDatabase()
    const broken = await openStore({ connectionString: planted.connectionString, pool: { max: 2 } })
    try {
      const { rows } = await sql<{
        def: string
      }>`select pg_get_functiondef('turnlog.project_event(turnlog.events)'::regprocedure) as def`.execute(broken.db)
      const def = rows[0]?.def ?? ''
      const wrong = def.replace(/set\s+event_seq\s*=\s*e\.seq\s*,\s*partial\s*=/, 'set partial =')
      expect(wrong).not.toBe(def)
      await sql.raw(wrong).execute(broken.db)

      // when / then
      const run = fc.assert(
        fc.asyncProperty(historyFor('message_revised'), (commands) => runDifferential(broken, commands, newDiffStats())),
        { numRuns: NUM_RUNS },
      )
      const failure = await run.then(
        () => null,
        (error: unknown) => error,
      )
      // fast-check reports the failing check as the cause of its error
      const cause = (failure as { cause?: unknown } | null)?.cause
      expect(cause instanceof Error ? cause.message : String(cause)).toMatch(
        /"where": "rule message_revised \(seqs \d+\.\.\d+\) after command #\d+ \{\\"kind\\":\\"revise\\"/,
      )
    } finally {
      await broken.close()
      await planted.drop()
    }
  }, 120_000)
})
