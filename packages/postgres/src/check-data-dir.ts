import { mkdirSync, readFileSync, readdirSync, statSync, type Stats } from 'node:fs'
import { join } from 'node:path'
import { TurnlogError, isTurnlogError } from '@turnlog/core'
import { DATA_DIR_LOCK_PREFIX } from './data-dir-lock.js'

/** The size of `global/pg_control` (PG_CONTROL_FILE_SIZE): a shorter file is truncated. */
const PG_CONTROL_SIZE = 8192

const RESTORE = 'restore the directory from a backup, or point dataDir at an empty (or not yet existing) directory to start a new database'

function invalid(dataDir: string, problem: string, todo: string, cause?: unknown): TurnlogError {
  return new TurnlogError('DATA_DIR_INVALID', `the embedded data directory ${dataDir} ${problem}: ${todo}`, {
    details: { dataDir, problem },
    ...(cause === undefined ? {} : { cause }),
  })
}

function statOrUndefined(path: string): Stats | undefined {
  try {
    return statSync(path)
  } catch (error) {
    // ENOTDIR: a parent on the path is a file (a directory of the database replaced by a file)
    const code = (error as { code?: unknown }).code
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined
    throw error
  }
}

/**
 * Makes sure `dataDir` is a directory, creating it (and its parents) when it does not exist. Throws
 * `DATA_DIR_INVALID` when the path is something else (a file), or cannot be created or read.
 */
export function ensureDataDir(dataDir: string): 'created' | 'exists' {
  let stats: Stats | undefined
  try {
    stats = statOrUndefined(dataDir)
  } catch (error) {
    throw invalid(dataDir, `cannot be read (${(error as Error).message})`, 'check the path and its permissions', error)
  }
  if (stats !== undefined) {
    if (!stats.isDirectory())
      throw invalid(dataDir, 'is not a directory', 'point dataDir at a directory (an empty or new one starts a new database)')
    return 'exists'
  }
  try {
    mkdirSync(dataDir, { recursive: true })
  } catch (error) {
    throw invalid(dataDir, `cannot be created (${(error as Error).message})`, 'check the path and the permissions of its parent', error)
  }
  return 'created'
}

/**
 * The checks that are cheap before PGlite starts on an existing directory (PGlite aborts, or even
 * initialises a database among foreign files, instead of saying what is wrong): the directory is
 * empty (apart from turnlog's lock files: a new database), or it has a `PG_VERSION` holding a version
 * number, a complete `global/pg_control`, a `pg_wal` and a `base` directory. Throws
 * `DATA_DIR_INVALID` naming the problem and what to do.
 */
export function checkDataDir(dataDir: string): 'empty' | 'database' {
  try {
    return check(dataDir)
  } catch (error) {
    if (isTurnlogError(error)) throw error
    throw invalid(dataDir, `cannot be checked (${(error as Error).message})`, RESTORE, error)
  }
}

function check(dataDir: string): 'empty' | 'database' {
  let entries: string[]
  try {
    entries = readdirSync(dataDir).filter((name) => !name.startsWith(DATA_DIR_LOCK_PREFIX))
  } catch (error) {
    throw invalid(dataDir, `cannot be read (${(error as Error).message})`, 'check the path and its permissions', error)
  }
  if (entries.length === 0) return 'empty'
  if (!entries.includes('PG_VERSION')) {
    throw invalid(
      dataDir,
      `is not empty and holds no database (no PG_VERSION; it has ${entries.slice(0, 3).join(', ')}${entries.length > 3 ? ', …' : ''})`,
      'point dataDir at an empty (or not yet existing) directory, or at an existing turnlog data directory',
    )
  }
  let version: string
  try {
    version = readFileSync(join(dataDir, 'PG_VERSION'), 'utf8').trim()
  } catch (error) {
    throw invalid(dataDir, `has an unreadable PG_VERSION (${(error as Error).message})`, RESTORE, error)
  }
  // a major version other than PGlite's own fails when PGlite starts (wrapped below, with its reason)
  if (!/^\d{1,3}$/.test(version))
    throw invalid(dataDir, `is damaged: PG_VERSION holds ${JSON.stringify(version.slice(0, 20))}, not a version number`, RESTORE)
  const control = statOrUndefined(join(dataDir, 'global', 'pg_control'))
  if (control === undefined || !control.isFile()) throw invalid(dataDir, 'is damaged: global/pg_control is missing', RESTORE)
  if (control.size !== PG_CONTROL_SIZE) {
    throw invalid(
      dataDir,
      `is damaged: global/pg_control is ${control.size} bytes, not ${PG_CONTROL_SIZE} (truncated or overwritten)`,
      RESTORE,
    )
  }
  for (const dir of ['pg_wal', 'base']) {
    const s = statOrUndefined(join(dataDir, dir))
    if (s === undefined || !s.isDirectory()) throw invalid(dataDir, `is damaged: the ${dir} directory is missing`, RESTORE)
  }
  return 'database'
}

/** Wraps a failure of PGlite to start on `dataDir` (it passed the cheap checks) as `DATA_DIR_INVALID`. */
export function pgliteStartFailed(dataDir: string, error: unknown): TurnlogError {
  const message =
    error instanceof Error ? error.message : typeof error === 'object' && error !== null ? JSON.stringify(error) : String(error)
  return invalid(
    dataDir,
    `could not be opened by PGlite (${message.slice(0, 300)}); it is damaged or was written by another program`,
    RESTORE,
    error,
  )
}
