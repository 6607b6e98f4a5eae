/**
 * Two or three imports of one state.db at the same time (an overlapping cron run, two terminals):
 * README, "Re-import is a no-op: appends are by deterministic id, compactions by summary id, and
 * revisions and rewinds already in the log are skipped".
 *
 * Regression: a rewind was skipped only when it was in the log when the import started. An import that
 * read the session before another one wrote the rewind then tried it again, and the rewind's target
 * (no longer live) made the whole import fail with `UNKNOWN_MESSAGE`, which the CLI reports as a usage
 * error (exit 2), half-way through the file. A rewind another import wrote meanwhile now counts as done.
 *
 * Regression: each run's `eventsWritten` (and its per-session counts) was the session's version after
 * the run minus before it, so it counted the events the overlapping runs wrote meanwhile too: the runs
 * together reported more events than the log holds. Each run now counts what its own calls wrote.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { useTestStore, type TestDatabase } from '@turnlog/testing'
import { hermesSessionId, importHermes } from '@turnlog/hermes'
import Database from 'better-sqlite3'

const SESSIONS = 30

let dir: string
let path: string
let db: TestDatabase
let store: PostgresStore
useTestStore((t) => ({ db, store } = t))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-concurrent-'))
  path = join(dir, 'state.db')
  const sqlite = new Database(path)
  sqlite.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, started_at REAL);
    CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT, role TEXT, content TEXT, timestamp REAL, active INTEGER, compacted INTEGER)`)
  const add = sqlite.prepare('INSERT INTO messages (session_id, role, content, timestamp, active, compacted) VALUES (?, ?, ?, ?, ?, ?)')
  for (let s = 0; s < SESSIONS; s++) {
    const id = `s${s}`
    sqlite.prepare('INSERT INTO sessions VALUES (?, 1760000000)').run(id)
    let t = 1760000000
    // a rewound attempt, then a compaction (hermes archives every active row and re-inserts the kept tail)
    add.run(id, 'user', 'q', t++, 0, 1)
    add.run(id, 'assistant', '(empty)', t++, 0, 0)
    add.run(id, 'assistant', 'a', t++, 0, 1)
    add.run(id, 'user', 'q2', t++, 0, 1)
    add.run(id, 'assistant', 'a2', t++, 0, 1)
    add.run(id, 'user', '[CONTEXT COMPACTION] q and a', t++, 1, 0)
    add.run(id, 'user', 'q2', t++, 1, 0)
    add.run(id, 'assistant', 'a2', t++, 1, 0)
    add.run(id, 'user', 'q3', t, 1, 0)
  }
  sqlite.close()
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('importHermes run three times at once on one file', () => {
  it('all succeed, the log is what one import writes (no rewind or compaction twice), and each run counts only what it wrote', async () => {
    // given: three stores, as three processes would have
    const others = await Promise.all([
      openStore({ connectionString: db.connectionString }),
      openStore({ connectionString: db.connectionString }),
    ])
    try {
      // when
      const runs = await Promise.allSettled([store, ...others].map((s) => importHermes(s, path)))

      // then
      expect(runs.map((r) => (r.status === 'rejected' ? String((r.reason as { code?: unknown }).code) : 'ok'))).toEqual(['ok', 'ok', 'ok'])
      const again = await importHermes(store, path)
      expect(again.eventsWritten).toBe(0)
      expect(again.sessions.every((s) => s.liveMatches)).toBe(true)
      // one import writes 9 events per session: 5 appends, 1 rewind, a compaction (summary + event), 1 append
      const versions = await Promise.all(
        again.sessions.map(async (s) => (await store.getSession(hermesSessionId(s.hermesSessionId))).version),
      )
      expect(new Set(versions)).toEqual(new Set([9]))
      // the runs together wrote the log once: their counts add up to it, session by session
      const results = runs.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []))
      expect(results.reduce((sum, r) => sum + r.eventsWritten, 0)).toBe(9 * SESSIONS)
      for (let i = 0; i < SESSIONS; i++) {
        const sum = (key: 'eventsWritten' | 'appended' | 'rewinds' | 'compactions' | 'revised'): number =>
          results.reduce((n, r) => n + (r.sessions[i]?.[key] ?? 0), 0)
        expect({ session: i, eventsWritten: sum('eventsWritten'), appended: sum('appended'), rewinds: sum('rewinds'), compactions: sum('compactions'), revised: sum('revised') }).toEqual({ session: i, eventsWritten: 9, appended: 6, rewinds: 1, compactions: 1, revised: 0 }) // prettier-ignore
      }
    } finally {
      await Promise.all(others.map((s) => s.close()))
    }
  })
})
