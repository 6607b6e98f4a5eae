import { createHash, randomBytes } from 'node:crypto'
import { closeSync, fsyncSync, linkSync, openSync, readFileSync, readdirSync, unlinkSync, writeSync } from 'node:fs'
import { hostname as osHostname } from 'node:os'
import { join } from 'node:path'
import { TurnlogError, isTurnlogError } from '@turnlog/core'

/**
 * The prefix of the lock files in an embedded data directory: `turnlog.lock.<generation>`. The file
 * with the highest generation is the lock's state; every file is written once (complete, then linked
 * into place) and never changed.
 */
export const DATA_DIR_LOCK_PREFIX = 'turnlog.lock.'

const TEMP_MARK = 'tmp-'

/** A short tag of this host in temp file names: only this host's temp files are ever cleaned up. */
const HOST_TAG = createHash('sha256').update(osHostname()).digest('hex').slice(0, 8)

/** Who holds (held) a data-directory lock: read from its lock file. */
export interface DataDirLockHolder {
  /** The holder's process id. */
  readonly pid: number
  /** The holder's start time (Linux: `/proc/<pid>/stat` field 22, clock ticks since boot), or null elsewhere. */
  readonly startTime: string | null
  /** The holder's host name. */
  readonly hostname: string
  /** When it took the lock (ISO 8601). */
  readonly since: string
}

/** A held lock on an embedded data directory; release it after closing the database. */
export interface DataDirLock {
  /** The data directory. */
  readonly dataDir: string
  /** The lock file this process created (`turnlog.lock.<generation>`). */
  readonly path: string
  /** The holder record this process wrote. */
  readonly holder: DataDirLockHolder
  /** The previous holder when its process no longer ran (killed, crashed) and its lock was taken over; else null. */
  readonly tookOverFrom: DataDirLockHolder | null
  /** Gives the lock up (writes the next generation as free). Idempotent. */
  release(): void
}

type LockRecord =
  | ({ readonly state: 'held'; readonly nonce: string } & DataDirLockHolder)
  | { readonly state: 'free'; readonly pid: number; readonly at: string }

/** What the current lock file says. */
type Reading =
  | { readonly kind: 'none' }
  | { readonly kind: 'free'; readonly generation: number }
  | { readonly kind: 'held'; readonly generation: number; readonly holder: DataDirLockHolder; readonly stale: boolean }
  | { readonly kind: 'unreadable'; readonly generation: number; readonly path: string }

/** The fields of `/proc/<pid>/stat` after the command name (fields[0] is field 3, the state), or null. */
function procStat(pid: number): string[] | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ')'
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  } catch {
    return null
  }
}

/** The start time of a process (clock ticks since boot), or null where `/proc` is not available. */
export function processStartTime(pid: number): string | null {
  const start = procStat(pid)?.[19] // field 22 overall
  return start !== undefined && /^\d+$/.test(start) ? start : null
}

function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to another user
    return (error as { code?: unknown }).code === 'EPERM'
  }
}

/**
 * True when the holder's process is certainly gone: same host, and its pid does not run, is a zombie
 * (exited, not reaped yet), or runs with another start time (the pid was reused). A holder on another host is never stale: its liveness
 * cannot be checked from here.
 */
function isStale(holder: DataDirLockHolder): boolean {
  if (holder.hostname !== osHostname()) return false
  if (!pidAlive(holder.pid)) return true
  const stat = procStat(holder.pid)
  // a zombie (exited, not yet reaped by its parent) still answers kill(pid, 0) but holds nothing
  if (stat?.[0] === 'Z' || stat?.[0] === 'X') return true
  if (holder.startTime === null) return false
  const now = processStartTime(holder.pid)
  return now !== null && now !== holder.startTime
}

function parseRecord(text: string): LockRecord | undefined {
  if (!text.endsWith('\n')) return undefined
  try {
    const r = JSON.parse(text) as Record<string, unknown>
    if (r['state'] === 'free' && typeof r['pid'] === 'number' && typeof r['at'] === 'string')
      return { state: 'free', pid: r['pid'], at: r['at'] }
    if (
      r['state'] === 'held' &&
      typeof r['pid'] === 'number' &&
      Number.isSafeInteger(r['pid']) &&
      r['pid'] > 0 &&
      (r['startTime'] === null || typeof r['startTime'] === 'string') &&
      typeof r['hostname'] === 'string' &&
      typeof r['since'] === 'string' &&
      typeof r['nonce'] === 'string'
    ) {
      return { state: 'held', pid: r['pid'], startTime: r['startTime'], hostname: r['hostname'], since: r['since'], nonce: r['nonce'] }
    }
    return undefined
  } catch {
    return undefined
  }
}

/** The generations of the lock files present, and the temp files. */
function listLockFiles(dataDir: string): { generations: number[]; temps: string[] } {
  const generations: number[] = []
  const temps: string[] = []
  for (const name of readdirSync(dataDir)) {
    if (!name.startsWith(DATA_DIR_LOCK_PREFIX)) continue
    const rest = name.slice(DATA_DIR_LOCK_PREFIX.length)
    if (/^[1-9]\d{0,14}$/.test(rest)) generations.push(Number(rest))
    else if (rest.startsWith(TEMP_MARK)) temps.push(name)
  }
  return { generations, temps }
}

function lockPath(dataDir: string, generation: number): string {
  return join(dataDir, `${DATA_DIR_LOCK_PREFIX}${generation}`)
}

function maxGeneration(dataDir: string): number {
  return Math.max(0, ...listLockFiles(dataDir).generations)
}

function read(dataDir: string): Reading {
  for (;;) {
    const generation = maxGeneration(dataDir)
    if (generation === 0) return { kind: 'none' }
    const path = lockPath(dataDir, generation)
    let text: string
    try {
      text = readFileSync(path, 'utf8')
    } catch (error) {
      // removed meanwhile: only files below a newer generation are removed, so list again
      if ((error as { code?: unknown }).code === 'ENOENT') continue
      throw error
    }
    const record = parseRecord(text)
    // every turnlog writer links a complete record into place, so an empty or partial file is not
    // ours: never take it over (its writer may be alive), let a person decide
    if (record === undefined) return { kind: 'unreadable', generation, path }
    if (record.state === 'free') return { kind: 'free', generation }
    const holder: DataDirLockHolder = { pid: record.pid, startTime: record.startTime, hostname: record.hostname, since: record.since }
    return { kind: 'held', generation, holder, stale: isStale(holder) }
  }
}

/**
 * Creates `turnlog.lock.<generation>` holding `record`, atomically and only if it does not exist: the
 * record is written and synced to a temp file first, then hard-linked to its name (`link` fails with
 * EEXIST when the name exists), so no reader ever sees an empty or partial lock file.
 */
function createGeneration(dataDir: string, generation: number, record: LockRecord): boolean {
  const temp = join(dataDir, `${DATA_DIR_LOCK_PREFIX}${TEMP_MARK}${process.pid}-${HOST_TAG}-${randomBytes(6).toString('hex')}`)
  const fd = openSync(temp, 'wx', 0o644)
  try {
    writeSync(fd, `${JSON.stringify(record)}\n`)
    fsyncSync(fd)
  } finally {
    closeSync(fd)
  }
  try {
    linkSync(temp, lockPath(dataDir, generation))
    return true
  } catch (error) {
    if ((error as { code?: unknown }).code === 'EEXIST') return false
    throw error
  } finally {
    unlinkSync(temp)
  }
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path)
  } catch {
    // gone already: another process cleaned it up
  }
}

/** Removes lock files older than `below` and temp files left by processes that no longer run. */
function cleanUp(dataDir: string, below: number): void {
  const { generations, temps } = listLockFiles(dataDir)
  for (const g of generations) if (g < below) removeQuietly(lockPath(dataDir, g))
  for (const name of temps) {
    const [pidText, host] = name.slice(DATA_DIR_LOCK_PREFIX.length + TEMP_MARK.length).split('-')
    const pid = Number(pidText)
    if (host === HOST_TAG && Number.isSafeInteger(pid) && pid > 0 && pid !== process.pid && !pidAlive(pid))
      removeQuietly(join(dataDir, name))
  }
}

function describeHolder(holder: DataDirLockHolder): string {
  const here = holder.hostname === osHostname()
  return `process ${holder.pid}${here ? '' : ` on host ${holder.hostname}`}${holder.pid === process.pid && here ? ' (this process)' : ''} since ${holder.since}`
}

function lockedError(dataDir: string, reading: Extract<Reading, { kind: 'held' | 'unreadable' }>): TurnlogError {
  if (reading.kind === 'unreadable') {
    return new TurnlogError(
      'DATA_DIR_LOCKED',
      `the embedded database ${dataDir} is locked by ${reading.path}, which does not hold a complete lock record (a process may be writing it, or another program wrote it); if no process uses the directory, delete that file`,
      { details: { dataDir, lockFile: reading.path, holder: null } },
    )
  }
  const { holder } = reading
  return new TurnlogError(
    'DATA_DIR_LOCKED',
    `the embedded database ${dataDir} is in use by ${describeHolder(holder)}: PGlite allows one process per data directory; close that store (or stop that process) first`,
    { details: { dataDir, lockFile: lockPath(dataDir, reading.generation), holder: { ...holder } } },
  )
}

/**
 * Takes the lock on an embedded (PGlite) data directory, which must exist. PGlite is a single-process
 * database that does not stop a second process itself: two processes with one directory open lose
 * acknowledged writes. Throws `DATA_DIR_LOCKED` (details: the holder's pid, host and since when) when a
 * live process, this one included, holds it.
 *
 * The lock is a sequence of immutable files `turnlog.lock.<generation>`; the highest generation says
 * who holds it, or that it is free. Taking the lock is creating the next generation, which only one
 * process can do (hard-link of a complete temp file: fails when the name exists), and only when the
 * current one is free or stale: its holder runs no more (same host; pid gone, or reused with another
 * start time). The winner then checks that no higher generation exists (a slow contender may have
 * created a lower one late) and removes older files. A file that is empty or not a complete record is
 * never taken over. Release writes the next generation as free. A directory that cannot hold the lock
 * (unwritable, no hard links) throws `DATA_DIR_INVALID`.
 */
export function acquireDataDirLock(dataDir: string): DataDirLock {
  try {
    return acquire(dataDir)
  } catch (error) {
    if (isTurnlogError(error)) throw error
    // the file system refused: permissions, a read-only mount, no hard links (some network and FAT file systems)
    const code = (error as { code?: unknown }).code
    throw new TurnlogError(
      'DATA_DIR_INVALID',
      `the embedded data directory ${dataDir} cannot be locked (${error instanceof Error ? error.message : String(error)}): it must be a writable directory on a file system with hard links; check its permissions and mount`,
      { details: { dataDir, problem: `cannot be locked${typeof code === 'string' ? ` (${code})` : ''}` }, cause: error },
    )
  }
}

function acquire(dataDir: string): DataDirLock {
  const startTime = processStartTime(process.pid)
  for (let attempt = 0; attempt < 1000; attempt++) {
    const reading = read(dataDir)
    if (reading.kind === 'unreadable' || (reading.kind === 'held' && !reading.stale)) throw lockedError(dataDir, reading)
    const generation = reading.kind === 'none' ? 1 : reading.generation + 1
    const holder: DataDirLockHolder = { pid: process.pid, startTime, hostname: osHostname(), since: new Date().toISOString() }
    const nonce = randomBytes(8).toString('hex')
    if (!createGeneration(dataDir, generation, { state: 'held', ...holder, nonce })) continue // another process won this generation
    // a contender that read an older state may create a generation below a newer one: only the
    // highest generation counts, so a file of ours below it is a lost race
    if (maxGeneration(dataDir) !== generation) {
      removeQuietly(lockPath(dataDir, generation))
      continue
    }
    cleanUp(dataDir, generation)
    let released = false
    return {
      dataDir,
      path: lockPath(dataDir, generation),
      holder,
      tookOverFrom: reading.kind === 'held' ? reading.holder : null,
      release: () => {
        if (released) return
        released = true
        try {
          // the next generation, free; nobody else can create it while this process holds the lock
          if (createGeneration(dataDir, generation + 1, { state: 'free', pid: process.pid, at: new Date().toISOString() }))
            cleanUp(dataDir, generation + 1)
        } catch {
          // the directory is gone or unwritable: with it gone there is nothing left to lock; otherwise
          // the record names this process, which is stale as soon as it exits
        }
      },
    }
  }
  throw new TurnlogError(
    'DATA_DIR_LOCKED',
    `could not lock the embedded database ${dataDir}: the lock changed hands 1000 times while this process tried`,
    {
      details: { dataDir, holder: null },
    },
  )
}
