/**
 * A garbage or damaged embedded data directory (issue 13 item 12): a path that is a file, a truncated
 * `global/pg_control`, a missing `pg_wal` gave a raw `Error` or `RuntimeError: Aborted()` (or PGlite
 * initialised a new database among foreign files). Now each is `DATA_DIR_INVALID`, saying what is
 * wrong and what to do, and leaves the directory as it was, unlocked.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { cpSync, existsSync, mkdirSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import fc from 'fast-check'
import { isTurnlogError, newSessionId } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { DATA_DIR_LOCK_PREFIX, acquireDataDirLock } from '@turnlog/postgres/internal'

const SLOW = 300_000

let root: string
let good: string

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnlog-datadir-'))
  good = join(root, 'good')
  const store = await openStore({ embedded: true, dataDir: good })
  await store.createSession({ id: newSessionId() })
  await store.close()
}, SLOW)

afterAll(async () => {
  await rm(root, { recursive: true, force: true })
})

let copies = 0
/** A copy of the good database directory, damaged by `damage`. */
function damaged(damage: (dir: string) => void): string {
  const dir = join(root, `copy-${++copies}`)
  cpSync(good, dir, { recursive: true })
  damage(dir)
  return dir
}

async function openError(dataDir: string): Promise<unknown> {
  try {
    const store = await openStore({ embedded: true, dataDir })
    await store.close()
    return undefined
  } catch (error) {
    return error
  }
}

/** The directory's entries other than the lock files, with their sizes. */
function snapshot(dir: string): string[] {
  const out: string[] = []
  const walk = (d: string, prefix: string): void => {
    for (const name of readdirSync(d).sort()) {
      if (prefix === '' && name.startsWith(DATA_DIR_LOCK_PREFIX)) continue
      const s = statSync(join(d, name))
      if (s.isDirectory()) walk(join(d, name), `${prefix}${name}/`)
      else out.push(`${prefix}${name}:${s.size}`)
    }
  }
  walk(dir, '')
  return out
}

function expectInvalid(error: unknown, problem: RegExp): void {
  expect(isTurnlogError(error, 'DATA_DIR_INVALID')).toBe(true)
  const e = error as Error & { details: { problem: string } }
  expect(e.details.problem).toMatch(problem)
  expect(e.message).toMatch(/restore|point dataDir/)
}

describe('a damaged or foreign embedded data directory', () => {
  it('a path that is a file', async () => {
    // given
    const file = join(root, 'a-file')
    writeFileSync(file, 'not a database')
    // when
    const error = await openError(file)
    // then
    expectInvalid(error, /is not a directory/)
  })

  it('a directory the lock cannot be written in (Linux /proc/self, unwritable even for root)', async () => {
    if (!existsSync('/proc/self/stat')) return // not Linux: nothing to check here
    // when
    const error = await openError('/proc/self')
    // then
    expect(isTurnlogError(error, 'DATA_DIR_INVALID')).toBe(true)
    expect((error as Error & { details: { problem: string } }).details.problem).toMatch(/^cannot be locked/)
    expect((error as Error).message).toMatch(/writable directory on a file system with hard links/)
  })

  it(
    'a non-empty directory without a database is refused, not initialised among foreign files',
    async () => {
      // given
      const dir = join(root, 'foreign')
      mkdirSync(dir)
      writeFileSync(join(dir, 'notes.txt'), 'mine')
      // when
      const error = await openError(dir)
      // then
      expectInvalid(error, /holds no database \(no PG_VERSION; it has notes\.txt\)/)
      expect(readdirSync(dir).filter((n) => !n.startsWith(DATA_DIR_LOCK_PREFIX))).toEqual(['notes.txt'])
    },
    SLOW,
  )

  it(
    'a truncated global/pg_control',
    async () => {
      // given
      const dir = damaged((d) => truncateSync(join(d, 'global', 'pg_control'), 100))
      const before = snapshot(dir)
      // when
      const error = await openError(dir)
      // then
      expectInvalid(error, /global\/pg_control is 100 bytes, not 8192/)
      expect(snapshot(dir)).toEqual(before)
    },
    SLOW,
  )

  it(
    'a missing pg_wal directory',
    async () => {
      // given
      const dir = damaged((d) => rmSync(join(d, 'pg_wal'), { recursive: true }))
      // when
      const error = await openError(dir)
      // then
      expectInvalid(error, /the pg_wal directory is missing/)
    },
    SLOW,
  )

  it(
    'the global directory replaced by a file (found by the property below: a raw ENOTDIR before)',
    async () => {
      // given
      const dir = damaged((d) => {
        rmSync(join(d, 'global'), { recursive: true })
        writeFileSync(join(d, 'global'), 'x')
      })
      // when
      const error = await openError(dir)
      // then
      expectInvalid(error, /global\/pg_control is missing/)
    },
    SLOW,
  )

  it(
    'a pg_control of the right size but overwritten: PGlite fails to start, wrapped',
    async () => {
      // given
      const dir = damaged((d) => writeFileSync(join(d, 'global', 'pg_control'), Buffer.alloc(8192, 0x5a)))
      // when
      const error = await openError(dir)
      // then
      expectInvalid(error, /could not be opened by PGlite/)
      expect((error as Error).cause).toBeDefined()
    },
    SLOW,
  )

  it(
    'after any refusal the directory is not left locked',
    async () => {
      // given
      const dir = damaged((d) => truncateSync(join(d, 'global', 'pg_control'), 0))
      // when
      await openError(dir)
      // then
      const lock = acquireDataDirLock(dir)
      lock.release()
      expect(existsSync(dir)).toBe(true)
    },
    SLOW,
  )

  it(
    'class: any one file or directory of a database deleted, truncated or overwritten opens, or fails with DATA_DIR_INVALID',
    async () => {
      // given: the top-level entries, and the files that PGlite reads at start
      const targets = [
        ...readdirSync(good).filter((n) => !n.startsWith(DATA_DIR_LOCK_PREFIX)),
        'global/pg_control',
        'global/pg_filenode.map',
        'pg_xact/0000',
      ]
      const outcomes = new Map<string, number>()
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...targets),
          fc.constantFrom('delete', 'truncate', 'garbage'),
          fc.nat({ max: 9000 }),
          async (target, action, size) => {
            // given
            const dir = damaged((d) => {
              const path = join(d, target)
              if (!existsSync(path)) return
              const isDir = statSync(path).isDirectory()
              if (action === 'delete' || isDir) rmSync(path, { recursive: true, force: true })
              if (action === 'truncate' && !isDir) truncateSync(path, Math.min(size, statSync(path).size))
              if (action === 'garbage') writeFileSync(path, Buffer.alloc(size, 0xa5))
            })
            // when
            let outcome: string
            try {
              const store = await openStore({ embedded: true, dataDir: dir })
              try {
                await store.sessions({ limit: 1 })
              } finally {
                await store.close()
              }
              outcome = 'opened'
            } catch (error) {
              // then: damage is named, never a raw error
              outcome = isTurnlogError(error) ? error.code : `raw ${String(error)}`
            }
            outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1)
            expect(['opened', 'DATA_DIR_INVALID', 'DB_ERROR', 'MIGRATION_FAILED']).toContain(outcome)
            rmSync(dir, { recursive: true, force: true })
          },
        ),
        { numRuns: 12 },
      )
      expect(outcomes.get('DATA_DIR_INVALID') ?? 0).toBeGreaterThan(0)
    },
    SLOW,
  )
})
