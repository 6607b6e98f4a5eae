import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll } from '@jest/globals'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'

/** A suite's fresh test database and empty working directory. */
export interface DatabaseAndDir {
  readonly db: TestDatabase
  readonly dir: string
}

/**
 * A fresh test database and an empty temporary directory (named `prefix…`) for a suite that runs the
 * CLI against Postgres: made in `beforeAll` (handed to `ready`, before the suite's own `beforeAll`
 * when called first), dropped and removed in `afterAll`.
 * @example
 * ```ts
 * let db: TestDatabase
 * let dir: string
 * useDatabaseAndDir('turnlog-cli-pg-', (made) => ({ db, dir } = made))
 * ```
 */
export function useDatabaseAndDir(prefix: string, ready: (made: DatabaseAndDir) => void): void {
  let made: DatabaseAndDir | undefined
  beforeAll(async () => {
    made = { db: await createTestDatabase(), dir: await mkdtemp(join(tmpdir(), prefix)) }
    ready(made)
  })
  afterAll(async () => {
    await made?.db.drop()
    if (made !== undefined) await rm(made.dir, { recursive: true, force: true })
  })
}
