import type { CliIo } from '../../src/cli-io.js'
import { runCli } from '../../src/run-cli.js'

/** What one in-process run of the command line printed, and its exit code. */
export interface InProcessRun {
  readonly code: number
  readonly out: string
  readonly err: string
}

/**
 * Runs the command line in-process through `runCli` of the sources (what a mutant of the sources
 * reaches, unlike the built binary), in `cwd` with an empty environment; stdout and stderr as text.
 */
export async function runCliInProcess(argv: readonly string[], cwd: string): Promise<InProcessRun> {
  let out = ''
  let err = ''
  const io: CliIo = { out: (t) => (out += t), err: (t) => (err += t), progressStream: undefined, env: {}, cwd }
  const code = await runCli(argv, io)
  return { code, out, err }
}
