/**
 * The `turnlog` binary on its default database: embedded PGlite in `./.turnlog/` of the working
 * directory, with no URL anywhere; and `--data-dir`. Also the data-directory lock.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { DATA_DIR_LOCK_PREFIX, acquireDataDirLock } from '@turnlog/postgres/internal'
import { runTurnlog } from './support/run-turnlog.js'

/** Per-test timeout: each test spawns the binary several times, and a loaded CI runner is slow. */
const SLOW = 240_000

let cwd: string
let parent: string
let fork: string
const run = (args: string[]) => runTurnlog(args, { cwd })

beforeAll(async () => {
  cwd = await mkdtemp(join(tmpdir(), 'turnlog-cli-embedded-'))
})

afterAll(async () => {
  await rm(cwd, { recursive: true, force: true })
})

describe('turnlog on the embedded default database', () => {
  it(
    'migrate with no database option creates ./.turnlog/',
    async () => {
      // when
      const migrated = await run(['migrate'])
      // then
      expect(migrated.code).toBe(0)
      expect(migrated.stdout).toMatch(/applied \d+ migration\(s\) on embedded .*\.turnlog/)
      expect(existsSync(join(cwd, '.turnlog', 'PG_VERSION'))).toBe(true)
      // the lock is released: its last file says free
      const locks = readdirSync(join(cwd, '.turnlog')).filter((n) => n.startsWith(DATA_DIR_LOCK_PREFIX))
      expect(locks).toHaveLength(1)
      expect(readFileSync(join(cwd, '.turnlog', locks[0] ?? ''), 'utf8')).toMatch(/"state":"free"/)
    },
    SLOW,
  )

  it(
    'demo --data-dir prints the readable timeline and keeps the database to explore',
    async () => {
      // when
      const demo = await run(['demo', '--data-dir', '.turnlog'])
      // then
      expect(demo.code).toBe(0)
      expect(demo.stderr).toBe('')
      for (const action of [
        'turn 1',
        'tool calls',
        'redelivery',
        'scaffolding',
        'rewind',
        'SIGKILL',
        'reopen',
        'recovery',
        'compaction',
        'revision',
        'streaming',
        'finalize',
        'fork',
        'replay',
        'audit',
      ]) {
        expect(demo.stdout).toMatch(new RegExp(`^\\s*\\d+\\s+(v\\d+)?\\s+${action}\\b`, 'm'))
      }
      expect(demo.stdout).toMatch(/PGlite recovered it/)
      expect(demo.stdout).toMatch(/turnlog: 0 lost, 0 duplicated, audit clean\./)
      expect(demo.stdout).toMatch(/^\s+turnlog\s+0\s+0\s+0\s+0\s/m)
      expect(demo.stdout).toMatch(/turnlog --data-dir \S+\.turnlog replay/)
    },
    SLOW,
  )

  it(
    'sessions, replay and audit read the same ./.turnlog/ without options',
    async () => {
      // when
      const sessions = (await run(['sessions', '--json'])).json<{
        sessions: { sessionId: string; parent: { sessionId: string } | null }[]
      }>()
      fork = sessions.sessions.find((s) => s.parent !== null)?.sessionId ?? ''
      parent = sessions.sessions.find((s) => s.parent === null)?.sessionId ?? ''
      const live = await run(['replay', fork])
      const audit = await run(['audit', '--all', '--fail-on', 'warning', '--json'])
      // then
      expect(sessions.sessions).toHaveLength(2)
      expect(live.code).toBe(0)
      expect(live.stdout).toMatch(/8 live message\(s\)/)
      expect(live.stdout).toMatch(/Actually, make it 2\.0\.0 instead\./)
      expect(audit.code).toBe(0)
      expect(audit.json()).toMatchObject({ formatVersion: 1, sessionsAudited: 2, findings: [] })
    },
    SLOW,
  )

  it(
    'rebuild rewrites every projection from the log',
    async () => {
      // when
      const rebuilt = await run(['rebuild', '--json'])
      // then
      expect(rebuilt.code).toBe(0)
      expect(rebuilt.json()).toMatchObject({ verify: false, sessions: 2, rewritten: 2, drift: [] })
    },
    SLOW,
  )

  it(
    'export, import (idempotent: nothing new) and inspect, all on ./.turnlog/',
    async () => {
      // when
      const exported = await run(['export', parent, '-o', 'parent.jsonl'])
      const imported = await run(['import', 'parent.jsonl', '--json'])
      const inspected = await run(['inspect', parent, '--html', 'parent.html'])
      // then
      expect(exported.code).toBe(0)
      expect(exported.stdout).toMatch(/exported 1 session\(s\), 21 event\(s\)/)
      expect(imported.code).toBe(0)
      expect(imported.json()).toMatchObject({ format: 'turnlog', sessions: 1, eventsWritten: 0, eventsSkipped: 21, sessionIds: [parent] })
      expect(inspected.code).toBe(0)
      expect(inspected.stdout).toMatch(/wrote .*parent\.html .*21 timeline entries, 0 audit finding/)
      expect(await readFile(join(cwd, 'parent.html'), 'utf8')).toContain(parent)
    },
    SLOW,
  )

  it(
    'refuses a data directory another live process holds (PGlite is single-process), takes over a dead one',
    async () => {
      // given: the lock held by this (live) test process, through the library's one implementation
      const lock = acquireDataDirLock(join(cwd, '.turnlog'))
      // when
      const busy = await run(['sessions'])
      lock.release()
      // a lock of a process that no longer runs: a pid that cannot exist
      const files = readdirSync(join(cwd, '.turnlog')).filter((n) => n.startsWith(DATA_DIR_LOCK_PREFIX))
      const next = Math.max(...files.map((n) => Number(n.slice(DATA_DIR_LOCK_PREFIX.length)))) + 1
      const dead = {
        state: 'held',
        pid: 999_999_999,
        startTime: null,
        hostname: hostname(),
        since: new Date().toISOString(),
        nonce: 'dead',
      }
      await writeFile(join(cwd, '.turnlog', `${DATA_DIR_LOCK_PREFIX}${next}`), `${JSON.stringify(dead)}\n`)
      const stale = await run(['sessions', '--json'])
      // then
      expect(busy.code).toBe(3)
      expect(busy.stderr).toMatch(new RegExp(`error DATA_DIR_LOCKED: .* in use by process ${process.pid} since`))
      expect(busy.stderr).toMatch(/PGlite allows one process per data directory/)
      expect(stale.code).toBe(0)
      expect(readFileSync(join(cwd, '.turnlog', `${DATA_DIR_LOCK_PREFIX}${next + 2}`), 'utf8')).toMatch(/"state":"free"/)
    },
    SLOW,
  )
})
