/**
 * A fork's lineage lives twice: in its `turnlog.sessions` row (`parent_session_id`, `parent_version`,
 * `fork_at`: what `getSession().parent` returns) and in its first event, `session_forked`, whose data
 * the chain link of seq 1 covers. The chain covers only the second, and the audit never compared the
 * two: a row edited by hand after the fact (another parent, another fork point, a plain session made a
 * fork or a fork made plain) passed a full audit clean. Now it is a `lineage_mismatch` (audit.md).
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore, type TestDatabase } from '@turnlog/testing'
import { audit, verifyChain, type Finding } from '@turnlog/audit'
import { rawSql } from './audit-fixtures.js'

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

/** A parent of three messages and its fork at the second; returns their ids. */
async function forked(): Promise<{ parent: SessionId; fork: SessionId; ids: string[] }> {
  const parent = await store.createSession()
  const messages = [
    createMessage({ role: 'user', content: 'q1' }),
    createMessage({ role: 'assistant', content: 'a1' }),
    createMessage({ role: 'user', content: 'q2' }),
  ]
  await store.append(parent, messages)
  const fork = await store.fork(parent, { at: messages[1]?.id ?? '' })
  return { parent, fork, ids: messages.map((m) => m.id) }
}

function lineage(findings: readonly Finding[]): Finding[] {
  return findings.filter((f) => f.kind === 'lineage_mismatch')
}

describe('audit: the session row’s fork lineage against its chained session_forked event', () => {
  it('finds nothing on an untouched fork and its parent', async () => {
    // given
    const { parent, fork } = await forked()

    // when / then
    expect((await audit(store, fork)).findings).toEqual([])
    expect((await audit(store, parent)).findings).toEqual([])
  })

  it('finds a fork point edited in the row (fork_at), at seq 1, with both sides as evidence', async () => {
    // given a fork whose row was edited to name another fork point
    const { parent, fork, ids } = await forked()
    const version = (await store.getSession(fork)).parent?.version
    await rawSql(db.connectionString, 'update turnlog.sessions set fork_at = $2 where session_id = $1', [fork, ids[2]])

    // when
    const report = await audit(store, fork)

    // then: one critical finding; the chain itself verifies (the event was not touched)
    expect((await verifyChain(store, fork)).ok).toBe(true)
    const found = lineage(report.findings)
    expect(found).toHaveLength(1)
    expect(found[0]).toMatchObject({
      kind: 'lineage_mismatch',
      severity: 'critical',
      sessionId: fork,
      seqs: [1],
      evidence: {
        problem: 'parent_mismatch',
        row: { sessionId: parent, version, at: ids[2] },
        event: { sessionId: parent, version, at: ids[1] },
      },
    })
    expect(found[0]?.eventIds).toHaveLength(1)
    expect(report.counts.byKind.lineage_mismatch).toBe(1)
  })

  it('finds a parent session or parent version edited in the row', async () => {
    // given two forks, one given another parent, one another parent version
    const a = await forked()
    const b = await forked()
    const other = await store.createSession()
    await rawSql(db.connectionString, 'update turnlog.sessions set parent_session_id = $2 where session_id = $1', [a.fork, other])
    await rawSql(db.connectionString, 'update turnlog.sessions set parent_version = 1 where session_id = $1', [b.fork])

    // when
    const reports = [await audit(store, a.fork), await audit(store, b.fork)]

    // then
    expect(reports.map((r) => lineage(r.findings).map((f) => [f.seqs, (f.evidence as { problem: string }).problem]))).toEqual([
      [[[1], 'parent_mismatch']],
      [[[1], 'parent_mismatch']],
    ])
  })

  it('finds a plain session made a fork in its row, and a fork made plain', async () => {
    // given a plain session with one message given a parent, and a fork whose lineage was cleared
    const { parent, fork, ids } = await forked()
    const plain = await store.createSession()
    await store.append(plain, [createMessage({ role: 'user', content: 'hi' })])
    const empty = await store.createSession()
    for (const s of [plain, empty]) {
      await rawSql(
        db.connectionString,
        'update turnlog.sessions set parent_session_id = $2, parent_version = 2, fork_at = $3 where session_id = $1',
        [s, parent, ids[1]],
      )
    }
    await rawSql(
      db.connectionString,
      'update turnlog.sessions set parent_session_id = null, parent_version = null, fork_at = null where session_id = $1',
      [fork],
    )

    // when
    const problems = async (s: SessionId): Promise<unknown[]> =>
      lineage((await audit(store, s)).findings).map((f) => [f.seqs, (f.evidence as { problem: string }).problem])

    // then
    expect(await problems(plain)).toEqual([[[1], 'missing_fork_event']])
    expect(await problems(empty)).toEqual([[[], 'missing_fork_event']])
    expect(await problems(fork)).toEqual([[[1], 'unexpected_fork_event']])
  })

  it('runs as the lineage check group, and only when selected', async () => {
    // given
    const { fork, ids } = await forked()
    await rawSql(db.connectionString, 'update turnlog.sessions set fork_at = $2 where session_id = $1', [fork, ids[0]])

    // when
    const only = await audit(store, fork, { checks: ['lineage'] })
    const without = await audit(store, fork, { checks: ['chain', 'fold'] })

    // then
    expect(only.findings.map((f) => f.kind)).toEqual(['lineage_mismatch'])
    expect(without.findings).toEqual([])
  })
})
