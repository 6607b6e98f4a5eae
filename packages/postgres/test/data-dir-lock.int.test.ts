/**
 * The embedded data-directory lock (issue 13 item 1): PGlite is single-process and does not stop a
 * second process on the same directory, whose writes then make the first one's acknowledged writes
 * vanish. Every embedded `openStore` with a `dataDir` takes the lock; these tests race real processes
 * against it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process'
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { hostname, tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { isTurnlogError, newSessionId } from '@turnlog/core'
import { openStore, type DataDirLockHolder } from '@turnlog/postgres'
import { DATA_DIR_LOCK_PREFIX, acquireDataDirLock, processStartTime } from '@turnlog/postgres/internal'
import { makeMigratedDataDir } from '@turnlog/testing'
import { builtEntry } from './faults/support/fault-helpers.js'

const SUPPORT = join(dirname(fileURLToPath(import.meta.url)), 'support')
const SLOW = 180_000

let root: string

beforeAll(async () => {
  builtEntry('postgres')
  root = await mkdtemp(join(tmpdir(), 'turnlog-lock-'))
})

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

/** A child process speaking the line protocol of embedded-writer.js. */
class Writer {
  readonly child: ChildProcessWithoutNullStreams
  readonly lines: string[] = []
  stderr = ''
  #waiters: { test: (line: string) => boolean; resolve: (line: string) => void }[] = []
  readonly exited: Promise<number | null>

  constructor(args: Record<string, unknown>) {
    this.child = spawn(process.execPath, [join(SUPPORT, 'embedded-writer.js'), JSON.stringify(args)], { stdio: ['pipe', 'pipe', 'pipe'] })
    this.child.stdin.on('error', () => {}) // written after the child exited
    this.exited = new Promise((resolve) => this.child.on('exit', (code) => resolve(code)))
    let buffer = ''
    this.child.stdout.setEncoding('utf8')
    this.child.stderr.setEncoding('utf8')
    this.child.stderr.on('data', (chunk: string) => (this.stderr += chunk))
    this.child.stdout.on('data', (chunk: string) => {
      buffer += chunk
      const parts = buffer.split('\n')
      buffer = parts.pop() ?? ''
      for (const line of parts) {
        this.lines.push(line)
        this.#waiters = this.#waiters.filter((w) => {
          if (!w.test(line)) return true
          w.resolve(line)
          return false
        })
      }
    })
  }

  /** Resolves with the first line (already printed or to come) that starts with one of `words`. */
  waitFor(...words: string[]): Promise<string> {
    return this.#waitFrom(0, words)
  }

  /** Like {@link Writer.waitFor}, counting only lines printed from now on. */
  next(...words: string[]): Promise<string> {
    return this.#waitFrom(this.lines.length, words)
  }

  #waitFrom(from: number, words: string[]): Promise<string> {
    const test = (line: string): boolean => words.some((w) => line === w || line.startsWith(`${w} `))
    const seen = this.lines.slice(from).find(test)
    if (seen !== undefined) return Promise.resolve(seen)
    return new Promise((resolve, reject) => {
      this.#waiters.push({ test, resolve })
      void this.exited.then(() =>
        setTimeout(() => reject(new Error(`writer exited before "${words.join('|')}": ${this.lines.join(' / ')}\n${this.stderr}`)), 50),
      )
    })
  }

  /** The ids of the appends this writer saw acknowledged. */
  acked(): string[] {
    return this.lines.filter((l) => l.startsWith('ack ')).map((l) => l.slice(4))
  }

  send(line: string): void {
    this.child.stdin.write(`${line}\n`)
  }
}

function lockFiles(dir: string): string[] {
  return readdirSync(dir).filter((n) => n.startsWith(DATA_DIR_LOCK_PREFIX))
}

describe('the embedded data-directory lock', () => {
  it(
    'incident: a second process opening the same dataDir through the library is refused, and no acknowledged write is lost',
    async () => {
      // given: process A has the store open (on a migrated database) and has acknowledged writes
      const dataDir = join(root, 'incident')
      await makeMigratedDataDir(dataDir)
      const sessionId = newSessionId()
      const a = new Writer({ dataDir, sessionId, prefix: 'a', count: 20 })
      await a.waitFor('idle')
      // when: process B opens the same directory (and would write, were it let in)
      const b = new Writer({ dataDir, sessionId, prefix: 'b', count: 20 })
      const answer = await b.waitFor('refused', 'opened')
      // A keeps writing, then closes
      const more = a.next('idle')
      a.send('more 20')
      await more
      const before = a.lines.length
      a.send('close')
      await a.waitFor('closed')
      b.send('close') // were B let in (no lock), it closes now, after A

      await Promise.all([a.exited, b.exited])
      // then: B was refused with the holder named, and every write A saw acknowledged is there
      expect(answer.split(' ').slice(0, 2)).toEqual(['refused', 'DATA_DIR_LOCKED'])
      const details = JSON.parse(answer.split(' ').slice(2).join(' ')) as { holder: DataDirLockHolder; dataDir: string }
      expect(details.holder).toMatchObject({ pid: a.child.pid, hostname: hostname() })
      expect(details.dataDir).toBe(dataDir)
      expect(b.acked()).toEqual([])
      expect(before).toBeGreaterThan(40)
      const store = await openStore({ embedded: true, dataDir })
      try {
        const loaded = await store.load(sessionId)
        expect(loaded.messages.map((m) => m.id)).toEqual(a.acked())
        expect(a.acked()).toHaveLength(40)
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it(
    'class: 6 processes taking and giving up the lock in a loop, some dying while they hold it, never hold it at once',
    async () => {
      // given
      const dir = join(root, 'race')
      await import('node:fs/promises').then((fs) => fs.mkdir(dir))
      const log = join(root, 'race.log')
      writeFileSync(log, '')
      const target = 100
      const acquisitions = (): number =>
        readFileSync(log, 'utf8')
          .split('\n')
          .filter((l) => l.startsWith('enter')).length
      const results: string[] = []
      const errors: string[] = []
      // when: six racers until 100 acquisitions in all; every racer dies holding the lock on its 10th
      // acquisition and is replaced
      const racer = (): Promise<void> =>
        new Promise((resolve) => {
          const child = spawn(process.execPath, [join(SUPPORT, 'lock-racer.js'), JSON.stringify({ dir, log, target, dieEvery: 10 })], {
            stdio: ['ignore', 'pipe', 'pipe'],
          })
          let out = ''
          let err = ''
          child.stdout.on('data', (c: Buffer) => (out += c.toString()))
          child.stderr.on('data', (c: Buffer) => (err += c.toString()))
          child.on('exit', (code) => {
            results.push(out.trim())
            if (code !== 0) errors.push(`exit ${code}: ${err}`)
            if (out.includes('died') && acquisitions() < target) void racer().then(resolve)
            else resolve()
          })
        })
      await Promise.all(Array.from({ length: 6 }, racer))
      // then: the log alternates enter/exit of one process; nobody entered while another was inside
      const lines = readFileSync(log, 'utf8')
        .split('\n')
        .filter((l) => l !== '')
      let inside: string | undefined
      let overlaps = 0
      for (const line of lines) {
        const [word, pid] = line.split(' ')
        if (word === 'enter') {
          if (inside !== undefined) overlaps++
          inside = pid
        } else {
          if (inside !== pid) overlaps++
          inside = undefined
        }
      }
      const held = lines.filter((l) => l.startsWith('enter')).length
      const deaths = results.filter((r) => r.includes('died')).length
      expect(errors).toEqual([])
      expect(overlaps).toBe(0)
      expect(held).toBeGreaterThanOrEqual(target)
      expect(deaths).toBeGreaterThan(0) // stale locks were taken over during the race
      expect(lockFiles(dir).length).toBeLessThanOrEqual(2)
    },
    SLOW,
  )

  it(
    'a holder killed with SIGKILL: its lock is taken over by the next opener, with its writes',
    async () => {
      // given: a holder of a migrated database with acknowledged writes
      const dataDir = join(root, 'killed')
      await makeMigratedDataDir(dataDir)
      const sessionId = newSessionId()
      const a = new Writer({ dataDir, sessionId, prefix: 'a', count: 5 })
      await a.waitFor('idle')
      // when
      a.child.kill('SIGKILL')
      await a.exited
      let previous: DataDirLockHolder | undefined
      const store = await openStore({ embedded: true, dataDir, onLockTakenOver: (p) => (previous = p) })
      try {
        // then
        expect(previous).toMatchObject({ pid: a.child.pid, startTime: processStartTime(process.pid) === null ? null : expect.any(String) })
        expect((await store.load(sessionId)).messages.map((m) => m.id)).toEqual(a.acked())
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it('an empty or partial lock file (its writer may be alive) is never taken over', async () => {
    // given
    const dir = join(root, 'partial')
    await import('node:fs/promises').then((fs) => fs.mkdir(dir))
    const record = JSON.stringify({
      state: 'held',
      pid: 999_999_999,
      startTime: null,
      hostname: hostname(),
      since: new Date().toISOString(),
      nonce: 'x',
    })
    for (const content of ['', record.slice(0, 20), record /* no newline: not known complete */]) {
      writeFileSync(join(dir, `${DATA_DIR_LOCK_PREFIX}1`), content)
      // when
      let error: unknown
      try {
        acquireDataDirLock(dir).release()
      } catch (e) {
        error = e
      }
      // then
      expect(isTurnlogError(error, 'DATA_DIR_LOCKED')).toBe(true)
      expect((error as Error).message).toMatch(/does not hold a complete lock record/)
      expect(readFileSync(join(dir, `${DATA_DIR_LOCK_PREFIX}1`), 'utf8')).toBe(content)
      expect(lockFiles(dir)).toEqual([`${DATA_DIR_LOCK_PREFIX}1`])
    }
  })

  it('this process holding it is refused too; a pid that runs with another start time (reused) is stale', async () => {
    // given
    const dir = join(root, 'self')
    await import('node:fs/promises').then((fs) => fs.mkdir(dir))
    const first = acquireDataDirLock(dir)
    // when
    let error: unknown
    try {
      acquireDataDirLock(dir)
    } catch (e) {
      error = e
    }
    first.release()
    const again = acquireDataDirLock(dir)
    again.release()
    // then
    expect(isTurnlogError(error, 'DATA_DIR_LOCKED')).toBe(true)
    expect((error as Error).message).toMatch(new RegExp(`process ${process.pid} \\(this process\\) since`))
    if (processStartTime(process.pid) !== null) {
      // given: a record of this pid with another start time: the pid was reused after its holder died
      const gen = Math.max(...lockFiles(dir).map((n) => Number(n.slice(DATA_DIR_LOCK_PREFIX.length)))) + 1
      const reused = { state: 'held', pid: process.pid, startTime: '1', hostname: hostname(), since: new Date(0).toISOString(), nonce: 'y' }
      writeFileSync(join(dir, `${DATA_DIR_LOCK_PREFIX}${gen}`), `${JSON.stringify(reused)}\n`)
      // when
      const taken = acquireDataDirLock(dir)
      // then
      expect(taken.tookOverFrom).toMatchObject({ pid: process.pid, startTime: '1' })
      taken.release()
    }
  })

  it(
    'a second openStore on an open dataDir in the same process is refused; after close it opens',
    async () => {
      // given
      const dataDir = join(root, 'same-process')
      const first = await openStore({ embedded: true, dataDir })
      // when
      const second = await openStore({ embedded: true, dataDir }).then(
        (s) => s,
        (e: unknown) => e,
      )
      await first.close()
      const third = await openStore({ embedded: true, dataDir })
      await third.close()
      // then
      expect(isTurnlogError(second, 'DATA_DIR_LOCKED')).toBe(true)
      expect(existsSync(join(dataDir, 'PG_VERSION'))).toBe(true)
    },
    SLOW,
  )
})
