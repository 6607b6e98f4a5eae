import { mkdirSync, openSync, readFileSync, rmSync, writeSync, closeSync } from 'node:fs'
import { join } from 'node:path'
import { CliError } from './cli-error.js'

/** The lock file's name inside an embedded data directory. */
export const LOCK_FILE = 'turnlog.lock'

/** A held lock on an embedded data directory; release it after closing the store. */
export interface DataDirLock {
  /** The lock file's path. */
  readonly path: string
  /** True when a lock left by a process that no longer runs (a crash, SIGKILL) was taken over. */
  readonly tookOverStale: boolean
  /** Deletes the lock file if this process still owns it. Idempotent. */
  release(): void
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else
    return (error as { code?: unknown }).code === 'EPERM'
  }
}

function readOwner(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8').trim(), 10)
    return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined
  } catch {
    return undefined
  }
}

/**
 * Takes the lock on an embedded (PGlite) data directory. PGlite is a single-process database: two
 * processes with the same directory open corrupt it, and PGlite itself does not stop the second one.
 * The lock is a file holding the owner's pid, created exclusively; a lock whose owner no longer runs
 * (it was killed) is taken over. Throws `DATA_DIR_LOCKED` when a live process holds it.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  mkdirSync(dataDir, { recursive: true })
  const path = join(dataDir, LOCK_FILE)
  let tookOverStale = false
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx')
      try {
        writeSync(fd, `${process.pid}\n`)
      } finally {
        closeSync(fd)
      }
      let released = false
      return {
        path,
        tookOverStale,
        release: () => {
          if (released) return
          released = true
          if (readOwner(path) === process.pid) rmSync(path, { force: true })
        },
      }
    } catch (error) {
      if ((error as { code?: unknown }).code !== 'EEXIST') throw error
      const owner = readOwner(path)
      if (owner !== undefined && owner !== process.pid && alive(owner)) {
        throw new CliError('DATA_DIR_LOCKED', `the embedded database ${dataDir} is in use by process ${owner}`, {
          hint: `Wait for that process to finish (PGlite allows one process per data directory). If no turnlog process is running, delete ${path}.`,
        })
      }
      // the owner is gone (crashed or killed): take the lock over
      rmSync(path, { force: true })
      tookOverStale = true
    }
  }
  throw new CliError('DATA_DIR_LOCKED', `could not lock the embedded database ${dataDir}`, { hint: `Delete ${path} if no turnlog process is running.` })
}
