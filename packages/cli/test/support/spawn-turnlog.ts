/**
 * Starts the built `turnlog` binary as a long-running child process (`turnlog tail`), so a test can
 * write to the database while it runs, read its output line by line, signal it and await its exit.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { existsSync } from 'node:fs'
import { BIN } from './run-turnlog.js'

/** How a spawned run ended. */
export interface SpawnedExit {
  /** The exit code, or null when a signal killed it. */
  readonly code: number | null
  readonly signal: NodeJS.Signals | null
  readonly stdout: string
  readonly stderr: string
}

/** A running `turnlog` child process. */
export interface SpawnedTurnlog {
  readonly child: ChildProcess
  /** Complete stdout lines so far. */
  lines(): string[]
  /** Stderr so far. */
  stderr(): string
  /** Resolves with the first `n` complete stdout lines; rejects on timeout or when the process exits first. */
  waitForLines(n: number, timeoutMs?: number): Promise<string[]>
  /** Resolves when the process exits (never rejects). */
  readonly exited: Promise<SpawnedExit>
  /** Resolves with the exit, killing the process with SIGKILL when it does not exit within `timeoutMs`. */
  exit(timeoutMs?: number): Promise<SpawnedExit>
}

/** Spawns `node dist/bin.js ...args` (without the URL environment variables unless given in `env`). */
export function spawnTurnlog(
  args: readonly string[],
  options: { cwd?: string; env?: Readonly<Record<string, string>> } = {},
): SpawnedTurnlog {
  if (!existsSync(BIN)) throw new Error(`${BIN} is missing: build first (npx -y pnpm@12.4.2 build)`)
  const env: Record<string, string | undefined> = { ...process.env }
  delete env['TURNLOG_DATABASE_URL']
  delete env['DATABASE_URL']
  Object.assign(env, options.env)
  const child = spawn(process.execPath, [BIN, ...args], { cwd: options.cwd ?? process.cwd(), env, stdio: ['ignore', 'pipe', 'pipe'] })
  let stdout = ''
  let stderr = ''
  const waiters = new Set<() => void>()
  const notify = (): void => {
    for (const waiter of [...waiters]) waiter()
  }
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    stdout += chunk
    notify()
  })
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk
  })
  let done = false
  const exited = new Promise<SpawnedExit>((resolve) => {
    child.on('close', (code, signal) => {
      done = true
      notify()
      resolve({ code, signal, stdout, stderr })
    })
  })
  const lines = (): string[] => stdout.split('\n').slice(0, -1)
  return {
    child,
    lines,
    stderr: () => stderr,
    exited,
    waitForLines: (n, timeoutMs = 10_000) =>
      new Promise<string[]>((resolve, reject) => {
        const check = (): void => {
          if (lines().length >= n) finish(() => resolve(lines().slice(0, n)))
          else if (done)
            finish(() =>
              reject(
                new Error(
                  `turnlog ${args.join(' ')} exited after ${lines().length} of ${n} line(s)\nstdout:\n${stdout}\nstderr:\n${stderr}`,
                ),
              ),
            )
        }
        const timer = setTimeout(
          () =>
            finish(() =>
              reject(new Error(`timed out waiting for ${n} line(s) of turnlog ${args.join(' ')}\nstdout:\n${stdout}\nstderr:\n${stderr}`)),
            ),
          timeoutMs,
        )
        const finish = (settle: () => void): void => {
          clearTimeout(timer)
          waiters.delete(check)
          settle()
        }
        waiters.add(check)
        check()
      }),
    exit: async (timeoutMs = 10_000) => {
      const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs)
      try {
        return await exited
      } finally {
        clearTimeout(timer)
      }
    },
  }
}
