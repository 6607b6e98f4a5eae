/**
 * `turnlog export` whose output does not reach its end, run as the built binary against Postgres
 * (docs/cli.md, "export", "Exit codes": "a failed export leaves no file"; 3 is "a file that cannot be
 * written").
 *
 * - `export -o -` whose reader goes away before the end line: regression, the export said "exported N
 *   session(s)" and exited 0 although the reader got a fraction of it; it is now `FILE_ERROR`, exit 3.
 * - A stdout that cannot be written at all (a full disk behind `> file`): regression, the process died of
 *   an uncaught exception with exit code 1, which scripts read as "findings"; it is `FILE_ERROR`, exit 3,
 *   for every command.
 * - An export to a file stopped by SIGINT removes its partial file (it was left behind as
 *   `<file>.partial-<pid>`) and exits 3.
 */
import { spawn } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { readdir } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { BIN } from './support/run-turnlog.js'
import { spawnTurnlog } from './support/spawn-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const SLOW = 90_000

let db: TestDatabase
let dir: string

useDatabaseAndDir('turnlog-cli-export-adv-', (made) => ({ db, dir } = made))

beforeAll(async () => {
  const store = await openStore({ connectionString: db.connectionString })
  try {
    // a large session, so that an export outlasts the pipe's buffer (a reader can leave before its end)
    const big = await store.createSession({ metadata: { title: 'big' } })
    await store.append(
      big,
      Array.from({ length: 100 }, (_, i) =>
        createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ${'x'.repeat(3000)}` }),
      ),
    )
  } finally {
    await store.close()
  }
}, 120_000)

describe('turnlog export whose output does not reach its end', () => {
  it(
    '-o - with a reader that leaves before the end line: FILE_ERROR, exit 3, no success reported',
    async () => {
      // given
      const child = spawnTurnlog(['--database-url', db.connectionString, 'export', '--all', '-o', '-'], { cwd: dir })

      // when: the reader takes the first line and goes away
      await child.waitForLines(1, 30_000)
      child.child.stdout?.destroy()
      const exit = await child.exit(60_000)

      // then
      expect(exit.code).toBe(3)
      expect(exit.stderr).toContain('turnlog: error FILE_ERROR')
      expect(exit.stderr).not.toMatch(/exported \d+ session/)
    },
    SLOW,
  )

  it(
    'a stdout that cannot be written (a full disk behind `> file`): exit 3 with FILE_ERROR, for export -o - and any command',
    async () => {
      // given: stdout is /dev/full, where every write fails with ENOSPC
      const toFull = (args: string[]): Promise<{ code: number | null; stderr: string }> =>
        new Promise((resolve, reject) => {
          const full = openSync('/dev/full', 'w')
          const child = spawn(process.execPath, [BIN, '--database-url', db.connectionString, ...args], {
            cwd: dir,
            stdio: ['ignore', full, 'pipe'],
          })
          closeSync(full)
          let stderr = ''
          child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
          child.on('error', reject)
          child.on('close', (code) => resolve({ code, stderr }))
        })

      // when
      const [exported, listed, audited] = await Promise.all([
        toFull(['export', '--all', '-o', '-']),
        toFull(['sessions']),
        toFull(['audit', '--all', '--json']),
      ])

      // then: never 1 (an uncaught exception's code, which means "findings"), never 0
      for (const [name, r] of Object.entries({ exported, listed, audited })) {
        expect({ name, code: r.code }).toEqual({ name, code: 3 })
        expect(r.stderr).toContain('turnlog: error FILE_ERROR: cannot write to stdout')
        expect(r.stderr).not.toMatch(/\n\s+at /) // no stack trace
      }
    },
    SLOW,
  )

  it(
    'to a file, stopped by SIGINT: exit 3 and neither the file nor a partial file is left',
    async () => {
      // given
      const before = await readdir(dir)
      const child = spawnTurnlog(['--database-url', db.connectionString, 'export', '--all', '-o', 'interrupted.jsonl'], { cwd: dir })
      // the database line is printed once the command runs (its interrupt handling is in place)
      for (let i = 0; i < 300 && !child.stderr().includes('turnlog: database:'); i++) await new Promise((r) => setTimeout(r, 20))

      // when
      child.child.kill('SIGINT')
      const exit = await child.exit(60_000)

      // then
      expect(exit.code).toBe(3)
      expect(exit.stderr).toMatch(/FILE_ERROR: the export was stopped by SIGINT/)
      expect(existsSync(join(dir, 'interrupted.jsonl'))).toBe(false)
      expect((await readdir(dir)).filter((name) => !before.includes(name))).toEqual([])
    },
    SLOW,
  )
})
