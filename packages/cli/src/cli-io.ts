import { EXIT_CODES } from './exit-codes.js'

/** Why a long-running command (`turnlog tail`) is asked to stop. */
export type InterruptReason = 'SIGINT' | 'SIGTERM' | 'stdout-closed'

/**
 * Everything the CLI touches in its process: output streams, the environment and the working
 * directory. Commands take a {@link CliIo} instead of reaching for `process`, so the whole CLI can run
 * in-process (the umbrella package, tests) as well as from `bin.ts`.
 */
export interface CliIo {
  /** Writes to standard output (machine output under `--json`, the human report otherwise). */
  readonly out: (text: string) => void
  /** Writes to standard error (progress, warnings, errors). */
  readonly err: (text: string) => void
  /** The stream progress bars draw on, when standard error is a terminal; otherwise undefined. */
  readonly progressStream: NodeJS.WritableStream | undefined
  /** Environment variables (`TURNLOG_DATABASE_URL`, `DATABASE_URL`). */
  readonly env: Readonly<Record<string, string | undefined>>
  /** The working directory relative paths and the default `./.turnlog/` data dir resolve against. */
  readonly cwd: string
  /**
   * Registers `listener` for requests to stop a long-running command (`turnlog tail`): SIGINT, SIGTERM,
   * or standard output closed by its reader (`turnlog tail | head`). Returns a function that removes it.
   * Absent when the CLI runs in-process without such requests: such a command then ends only by itself
   * (`--limit`) or on an error.
   */
  readonly onInterrupt?: (listener: (reason: InterruptReason) => void) => () => void
}

/**
 * The {@link CliIo} of the current process. When a reader closes the pipe early (`turnlog … | head`),
 * further output is dropped and the command still finishes (and cleans up) instead of crashing on EPIPE.
 * When stdout cannot be written at all (a full disk or an I/O error behind `> file`), output is dropped
 * the same way, the error is said on stderr and the process exits 3 (`FILE_ERROR`) whatever the command
 * returned: a run whose result was lost never exits 0, nor 1 (an uncaught error's code, which scripts
 * read as "findings").
 */
export function processIo(): CliIo {
  const closed = { out: false, err: false }
  const outClosedListeners = new Set<() => void>()
  let outFailed = false
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    closed.out = true
    if (error.code !== 'EPIPE' && !outFailed) {
      outFailed = true
      if (!closed.err) process.stderr.write(`turnlog: error FILE_ERROR: cannot write to stdout: ${error.message}\n`)
      // set at exit: the command's own exit code is assigned after it returns, which may be later than this
      process.once('exit', () => {
        process.exitCode = EXIT_CODES.runtime // FILE_ERROR
      })
    }
    for (const listener of [...outClosedListeners]) listener()
  })
  process.stderr.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error
    closed.err = true
  })
  return {
    out: (text) => {
      if (!closed.out) process.stdout.write(text)
    },
    err: (text) => {
      if (!closed.err) process.stderr.write(text)
    },
    progressStream: process.stderr.isTTY === true ? process.stderr : undefined,
    env: process.env,
    cwd: process.cwd(),
    onInterrupt: (listener) => {
      // SIGINT once: a second Ctrl-C while the command shuts down gets Node's default (exit at once).
      // SIGTERM stays handled: senders like timeout(1) signal the process and then its group, and a
      // service manager escalates to SIGKILL by itself.
      const onSigint = (): void => listener('SIGINT')
      const onSigterm = (): void => listener('SIGTERM')
      const onClosed = (): void => listener('stdout-closed')
      process.once('SIGINT', onSigint)
      process.on('SIGTERM', onSigterm)
      outClosedListeners.add(onClosed)
      if (closed.out) queueMicrotask(onClosed)
      return () => {
        process.removeListener('SIGINT', onSigint)
        process.removeListener('SIGTERM', onSigterm)
        outClosedListeners.delete(onClosed)
      }
    },
  }
}
