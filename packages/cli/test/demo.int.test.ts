/**
 * `turnlog demo --json`, the README's main job, run as the real binary on its default: a fresh
 * temporary embedded database (whatever the URL variables say), a real child process killed with
 * SIGKILL mid-turn.
 */
import { existsSync } from 'node:fs'
import { describe, expect, it } from '@jest/globals'
import { runTurnlog } from './support/run-turnlog.js'

interface Score {
  expected: number
  lost: number
  duplicated: number
  stale: number
  scaffoldingStored: number
  lostIds: string[]
}

interface DemoSummary {
  database: { kind: string; where: string; kept: boolean }
  sessionId: string
  forkSessionId: string
  steps: { n: number; action: string; detail: string; version: number | null }[]
  turnlog: Score & { liveMatches: boolean; forkMatches: boolean; events: number; liveCount: number }
  audit: { ok: boolean; findings: unknown[]; sessions: number }
  cursorPersister: Score & { rows: number; resumeCount: number; correctLiveCount: number }
  labels: Record<string, string>
  ok: boolean
  durationMs: number
}

describe('turnlog demo --json', () => {
  it('persists every message exactly once where a position cursor loses and duplicates', async () => {
    // given URL variables pointing where nothing listens: the demo ignores them (docs/cli.md), so it
    // never writes into a database by accident; had it used them, it would fail with DB_TRANSIENT
    const nowhere = 'postgresql://demo@127.0.0.1:1/nowhere'
    // when
    const run = await runTurnlog(['demo', '--json'], { timeoutMs: 150_000, env: { TURNLOG_DATABASE_URL: nowhere, DATABASE_URL: nowhere } })
    // then: only the summary on stdout, nothing on stderr
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const s = run.json<DemoSummary>()
    expect(Object.keys(s).sort()).toEqual(
      ['database', 'sessionId', 'forkSessionId', 'steps', 'turnlog', 'audit', 'cursorPersister', 'labels', 'ok', 'durationMs'].sort(),
    )
    expect(s.ok).toBe(true)
    expect(s.database).toMatchObject({ kind: 'embedded', kept: false })
    expect(existsSync(s.database.where)).toBe(false) // the temporary data dir is gone

    // turnlog: nothing lost, duplicated, stale, no scaffolding stored; load() is the runtime's list
    expect(s.turnlog).toMatchObject({
      lost: 0,
      duplicated: 0,
      stale: 0,
      scaffoldingStored: 0,
      liveMatches: true,
      forkMatches: true,
      liveCount: 9,
    })
    expect(s.turnlog.expected).toBeGreaterThanOrEqual(15)
    expect(s.audit).toMatchObject({ ok: true, findings: [], sessions: 2 })

    // the naive persister lost the crashed turn's call and the summary, and stored the redelivery twice
    expect(s.cursorPersister.lost).toBeGreaterThan(0)
    expect(s.cursorPersister.duplicated).toBeGreaterThan(0)
    expect(s.cursorPersister.scaffoldingStored).toBe(1)
    expect(s.cursorPersister.lostIds.map((id) => s.labels[id])).toContain('the compaction summary')
    expect(s.cursorPersister.resumeCount).not.toBe(s.cursorPersister.correctLiveCount)

    // the timeline: every scenario, in order, with versions
    const actions = s.steps.map((step) => step.action)
    expect(actions).toEqual([
      'turn 1',
      'tool calls',
      'tool results',
      'reply',
      'redelivery',
      'turn 2',
      'tool call',
      'scaffolding',
      'rewind',
      'SIGKILL',
      'reopen',
      'recovery',
      'compaction',
      'turn 3',
      'compaction',
      'revision',
      'streaming',
      'finalize',
      'fork',
      'replay',
      'audit',
    ])
    const step = (action: string) => s.steps.find((x) => x.action === action)
    expect(step('redelivery')?.detail).toMatch(/0 appended, 1 duplicate/)
    expect(step('scaffolding')?.detail).toMatch(/0 appended/)
    expect(step('SIGKILL')?.detail).toMatch(/killed with SIGKILL/)
    expect(step('reopen')?.detail).toMatch(/PGlite recovered it \(stale lock of the dead pid taken over\)/)
    // exactly once: the killed worker's call is a duplicate, the rest of the turn is appended
    expect(step('recovery')?.detail).toMatch(/: 2 appended \(.*\), 8 already durable: exactly once/)
    expect(step('recovery')?.version).toBe((step('SIGKILL')?.version ?? 0) + 2)
  }, 180_000) // 5-8 s on a quiet machine (docs/cli.md); generous for a loaded CI runner
})
