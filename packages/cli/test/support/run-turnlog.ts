/**
 * Runs the built `turnlog` binary (`packages/cli/dist/bin.js`) in a child process, the way a user or a
 * script does. Build first (`npx -y pnpm@12.4.2 build`; the root `pnpm test` builds before Jest).
 */
import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The built executable. */
export const BIN = fileURLToPath(new URL('../../dist/bin.js', import.meta.url))

/** What a run printed and how it ended. */
export interface TurnlogRun {
  readonly code: number
  readonly stdout: string
  readonly stderr: string
  /** `stdout` parsed as one JSON document (throws, showing the output, when it is not). */
  json<T = Record<string, unknown>>(): T
}

/** Options of {@link runTurnlog}. */
export interface RunTurnlogOptions {
  readonly cwd?: string
  /** Extra environment; `TURNLOG_DATABASE_URL` and `DATABASE_URL` are removed unless given here. */
  readonly env?: Readonly<Record<string, string>>
  readonly timeoutMs?: number
  /** Another built `bin.js` to run (an installed copy); {@link BIN} by default. */
  readonly bin?: string
}

/** Runs `node dist/bin.js ...args` and resolves with its exit code and output (never rejects on exit codes). */
export function runTurnlog(args: readonly string[], options: RunTurnlogOptions = {}): Promise<TurnlogRun> {
  const bin = options.bin ?? BIN
  if (!existsSync(bin)) throw new Error(`${bin} is missing: build first (npx -y pnpm@12.4.2 build)`)
  const env: Record<string, string | undefined> = { ...process.env }
  delete env['TURNLOG_DATABASE_URL']
  delete env['DATABASE_URL']
  Object.assign(env, options.env)
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [bin, ...args],
      { cwd: options.cwd ?? process.cwd(), env, timeout: options.timeoutMs ?? 150_000, maxBuffer: 64 * 1024 * 1024, encoding: 'utf8' },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof (error as { code?: unknown }).code === 'number' ? (error as { code: number }).code : -1
        if (code === -1) {
          reject(new Error(`turnlog ${args.join(' ')} did not exit normally: ${String(error)}\n${stderr}`))
          return
        }
        resolve({
          code,
          stdout,
          stderr,
          json<T>(): T {
            try {
              return JSON.parse(stdout) as T
            } catch {
              throw new Error(`turnlog ${args.join(' ')} printed no JSON document on stdout (exit ${code}):\n${stdout}\nstderr:\n${stderr}`)
            }
          },
        })
      },
    )
  })
}
