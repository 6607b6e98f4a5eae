/**
 * `turnlog export` of more data than the file stream buffers (16 KiB), so that it waits for 'drain'
 * many times, as the real binary against Postgres. Regression for the adversarial finding D5: every
 * wait left an 'error' listener on the stream, and past 10 Node printed a MaxListenersExceededWarning
 * on stderr, which `--json` promises to keep empty (cli.md).
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { runTurnlog } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const SESSIONS = 20
const MESSAGES = 100
/** About 2 MB of export: some 120 times the stream's 16 KiB buffer. */
const FILLER = 'x'.repeat(1000)

let db: TestDatabase
let dir: string
/**
 * The binary runs without the NODE_OPTIONS Jest runs under: `--no-warnings=ExperimentalWarning` turns
 * off every warning on Node 20, which would hide the one this test looks for.
 */
const asUsers = { NODE_OPTIONS: '' }

useDatabaseAndDir('turnlog-cli-export-', (made) => ({ db, dir } = made))

beforeAll(async () => {
  const store = await openStore({ connectionString: db.connectionString })
  try {
    for (let s = 0; s < SESSIONS; s++) {
      const id = await store.createSession()
      await store.append(
        id,
        Array.from({ length: MESSAGES }, (_, i) =>
          createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${s}.${i} ${FILLER}` }),
        ),
      )
    }
  } finally {
    await store.close()
  }
}, 120_000)

describe('turnlog export under backpressure (D5)', () => {
  it('keeps stderr empty under --json and writes the whole file', async () => {
    // given
    const file = join(dir, 'big.jsonl')

    // when
    const run = await runTurnlog(['--database-url', db.connectionString, '--json', 'export', '--all', '-o', file], {
      cwd: dir,
      env: asUsers,
    })

    // then
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    const out = run.json<{ sessions: number; events: number; bytes: number }>()
    expect(out).toMatchObject({ sessions: SESSIONS, events: SESSIONS * MESSAGES })
    expect(out.bytes).toBeGreaterThan(100 * 16 * 1024) // the stream filled up over 100 times
    const lines = (await readFile(file, 'utf8')).trimEnd().split('\n')
    expect(lines).toHaveLength(1 + SESSIONS * (1 + MESSAGES) + 1)
    expect(JSON.parse(lines.at(-1) as string)).toEqual({ kind: 'end', sessions: SESSIONS, events: SESSIONS * MESSAGES })
  }, 180_000)

  it('prints no warning without --json either: only the database line and nothing from Node', async () => {
    // when
    const run = await runTurnlog(['--database-url', db.connectionString, 'export', '--all', '-o', join(dir, 'big-text.jsonl')], {
      cwd: dir,
      env: asUsers,
    })

    // then
    expect(run.code).toBe(0)
    expect(run.stderr).not.toMatch(/Warning|MaxListeners/)
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^turnlog: database: Postgres /)])
  }, 180_000)
})
