import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll } from '@jest/globals'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { execFile } from 'node:child_process'
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { createTestDatabase, type TestDatabase } from './create-test-database.js'
import type { UseTestStoreOptions } from './use-test-store.js'

/** The two stores a suite runs on with `describe.each(STORE_KINDS)`: a database of its own on the test server, and embedded PGlite. */
export const STORE_KINDS = ['postgres', 'pglite'] as const

/** One of {@link STORE_KINDS}. */
export type StoreKind = (typeof STORE_KINDS)[number]

/** A store {@link openTestStore} opened, with what closes it. */
export interface OpenedTestStore {
  readonly store: PostgresStore
  /** The Postgres database (undefined for PGlite). */
  readonly db: TestDatabase | undefined
  /** Closes the store and drops its database. */
  close(): Promise<void>
}

/**
 * Opens a store of `kind`: migrated, on a fresh database of the test server (opened with `options`, a
 * pool size for instance), or on an in-memory PGlite.
 */
export async function openTestStore(kind: StoreKind, options: UseTestStoreOptions = {}): Promise<OpenedTestStore> {
  if (kind === 'pglite') {
    const template = await migratedPGliteTemplate()
    if (template === undefined) {
      const store = await openStore({ embedded: true })
      return { store, db: undefined, close: () => store.close() }
    }
    const pglite = await newPGlite(template)
    const store = await openStore({ pglite })
    return {
      store,
      db: undefined,
      close: async () => {
        await store.close()
        await pglite.close()
      },
    }
  }
  const db = await createTestDatabase({ migrated: true })
  const store = await openStore({ ...options, connectionString: db.connectionString })
  return {
    store,
    db,
    close: async () => {
      await store.close()
      await db.drop()
    },
  }
}

/**
 * {@link openTestStore} (with `options`) in `beforeAll`, handed to `ready`, closed in `afterAll`: the setup of a suite run
 * on both stores. Call it at the top of a `describe.each(STORE_KINDS)` body.
 * @example
 * ```ts
 * describe.each(STORE_KINDS)('… (%s)', (kind) => {
 *   let store: PostgresStore
 *   useTestStoreOfKind(kind, (t) => ({ store } = t))
 * })
 * ```
 */
export function useTestStoreOfKind(kind: StoreKind, ready: (opened: OpenedTestStore) => void, options: UseTestStoreOptions = {}): void {
  let opened: OpenedTestStore | undefined
  beforeAll(async () => {
    opened = await openTestStore(kind, options)
    ready(opened)
  })
  afterAll(async () => {
    await opened?.close()
  })
}

/**
 * Env var (set by the jest global setup): a directory of this test run where the first test worker that
 * opens an in-memory PGlite store leaves a dump of a migrated database, which every later one loads.
 */
export const PGLITE_TEMPLATE_DIR_ENV = 'TURNLOG_TEST_PGLITE_TEMPLATE_DIR'

let template: Promise<Blob | undefined> | undefined

/**
 * The migrated PGlite data directory of this run (a tar), made on first use: a PGlite store opens from
 * it in about a quarter of the time a new one takes (PGlite's initdb and the migrations, ≈ 1.7 s of CPU
 * per store, ≈ 2.5 s under jest, against ≈ 0.4 s). Undefined outside a jest run with the global setup.
 */
function migratedPGliteTemplate(): Promise<Blob | undefined> {
  template ??= (async () => {
    const dir = process.env[PGLITE_TEMPLATE_DIR_ENV]
    if (dir === undefined || dir === '') return undefined
    const file = join(dir, 'migrated.tar')
    // one worker makes it (the first to create the claim file); the others wait for it, up to a minute
    if (!claim(join(dir, 'migrated.claim'))) {
      for (const deadline = Date.now() + 60_000; !existsSync(file) && Date.now() < deadline;) await sleep(50)
    }
    if (existsSync(file)) return new Blob([readFileSync(file)])
    const pglite = await newPGlite(undefined)
    try {
      await (await openStore({ pglite })).close()
      const dump = await pglite.dumpDataDir('none')
      // written whole under another name, then renamed: a worker reading it never sees half a file
      const partial = join(dir, `migrated.${process.pid}.tar`)
      writeFileSync(partial, Buffer.from(await dump.arrayBuffer()))
      renameSync(partial, file)
      return dump
    } finally {
      await pglite.close()
    }
  })()
  return template
}

/**
 * A new in-memory PGlite instance on a migrated database with no session, for a test of a caller's own
 * instance (`openStore({ pglite })`) that is not about migrating one: loaded from this run's migrated
 * dump (see {@link openTestStore}) in about a quarter of the time of PGlite's initdb and the migrations.
 * Outside a jest run with the global setup, a new instance a store migrated. The caller closes it.
 */
export async function openMigratedPGlite(): Promise<PGlite> {
  const template = await migratedPGliteTemplate()
  if (template !== undefined) return newPGlite(template)
  const pglite = await newPGlite(undefined)
  await (await openStore({ pglite })).close()
  return pglite
}

/**
 * The path of this run's migrated PGlite dump (see {@link openTestStore}), made on first use: a tar a
 * PGlite instance loads with `PGlite.create({ loadDataDir })`, for a process of a test's own that needs a
 * migrated instance without the initdb and the migrations. Undefined outside a jest run with the global
 * setup.
 */
export async function migratedPGliteDump(): Promise<string | undefined> {
  const dir = process.env[PGLITE_TEMPLATE_DIR_ENV]
  if ((await migratedPGliteTemplate()) === undefined || dir === undefined || dir === '') return undefined
  const file = join(dir, 'migrated.tar')
  return existsSync(file) ? file : undefined
}

/**
 * Makes `dir` (absent or empty) the data directory of a migrated embedded database with no session, as
 * `openStore({ embedded: true, dataDir: dir })` followed by `close()` leaves a new directory: extracted
 * from this run's migrated PGlite dump (see {@link openTestStore}) in ≈ 0.1 s, where PGlite's initdb and
 * the migrations take ≈ 3-5 s of CPU (in the test process or in a child that opens it). For a test whose
 * subject is what happens on a database (a lock, a crash, damage, an import), not how a directory is
 * created. Outside a jest run with the global setup, or without `tar`, the store makes it.
 */
export async function makeMigratedDataDir(dir: string): Promise<void> {
  const file = await migratedPGliteDump()
  if (file !== undefined) {
    mkdirSync(dir, { recursive: true })
    try {
      // the dump's members are absolute (/base/…, /global/…): tar strips the leading slash
      await promisify(execFile)('tar', ['-xf', file, '-C', dir, '--no-same-owner'])
      // the dump was taken of a running instance: a closed store leaves no postmaster.pid
      rmSync(join(dir, 'postmaster.pid'), { force: true })
      return
    } catch {
      rmSync(dir, { recursive: true, force: true }) // no tar, or a partial extraction: make it the slow way
      mkdirSync(dir, { recursive: true })
    }
  }
  await (await openStore({ embedded: true, dataDir: dir })).close()
}

/** True when this process created `path` (exclusively); false when it existed. */
function claim(path: string): boolean {
  try {
    closeSync(openSync(path, 'wx'))
    return true
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false
    throw error
  }
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function newPGlite(loadDataDir: Blob | undefined): Promise<PGlite> {
  const { PGlite } = await import('@electric-sql/pglite')
  return PGlite.create(loadDataDir === undefined ? {} : { loadDataDir })
}
