import { createWriteStream } from 'node:fs'
import { rename, rm } from 'node:fs/promises'
import { once } from 'node:events'
import { exportSessions } from '@turnlog/audit'
import { CliError } from '../cli-error.js'
import type { InterruptReason } from '../cli-io.js'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { createProgressBar } from '../progress-bar.js'
import { resolvePath } from '../read-input-file.js'
import { countSessions } from '../count-sessions.js'
import { resolveSessionId } from '../resolve-session-id.js'

/** Options of `turnlog export`. */
export interface ExportCommandOptions {
  readonly all?: boolean
  /** The file to write, or `-` for stdout. */
  readonly output: string
}

/** Where export lines go: a file (written to a temp name, renamed when complete) or stdout. */
interface LineSink {
  write(line: string): Promise<void>
  /** Makes the output visible (the rename); only after the last line. */
  commit(): Promise<void>
  /** Removes a partial output after a failure. */
  abort(): Promise<void>
}

function fileSink(path: string): LineSink {
  const temp = `${path}.partial-${process.pid}`
  const stream = createWriteStream(temp, { encoding: 'utf8' })
  let failure: unknown
  stream.on('error', (error) => {
    failure = error
  })
  const fail = (error: unknown): CliError =>
    new CliError('FILE_ERROR', `cannot write ${path}: ${(error as Error).message}`, { cause: error })
  /**
   * Waits for `event`, or for the stream to fail (then `failure` is set). `once` listens for 'error' as
   * well and removes both listeners when either comes, so a wait leaves no listener behind: an export
   * waits for 'drain' once per 16 KiB, and one 'error' listener left per wait grew without bound (and
   * Node warned on stderr past 10).
   */
  const settle = async (event: 'drain' | 'finish'): Promise<void> => {
    if (failure !== undefined) return
    await once(stream, event).catch(() => {})
  }
  return {
    async write(line) {
      if (failure !== undefined) throw fail(failure)
      if (!stream.write(`${line}\n`)) await settle('drain')
      if (failure !== undefined) throw fail(failure)
    },
    async commit() {
      if (failure !== undefined) throw fail(failure)
      stream.end()
      await settle('finish')
      if (failure !== undefined) throw fail(failure)
      await rename(temp, path).catch((error: unknown) => {
        throw fail(error)
      })
    },
    async abort() {
      stream.destroy()
      await rm(temp, { force: true })
    },
  }
}

/** The sink for `-o -`: stdout, which the process writes synchronously to a pipe or a file. */
function stdoutSink(ctx: CommandContext): LineSink {
  return {
    write: async (line) => ctx.io.out(`${line}\n`),
    // an EPIPE of the last lines shows as a stdout error on a later tick: let it arrive before the check
    commit: () => new Promise((resolve) => setImmediate(resolve)),
    abort: async () => {},
  }
}

/**
 * `turnlog export`: writes sessions as turnlog JSONL (a header, each session and its events with their
 * hash-chain links, an end line). Recorded conflicts (refused writes) are not exported: the output
 * says how many stay behind (`conflictsNotExported`). The file appears only when complete: it is written under a temporary
 * name and renamed at the end.
 */
export async function runExport(ctx: CommandContext, session: string | undefined, options: ExportCommandOptions): Promise<ExitCode> {
  const all = options.all === true
  if (all === (session !== undefined)) {
    throw new CliError('USAGE', all ? 'give a session id or --all, not both' : 'export needs a session id or --all', {
      hint: 'turnlog export <session> -o file.jsonl  or  turnlog export --all -o backup.jsonl',
    })
  }
  const toStdout = options.output === '-'
  if (toStdout && ctx.json) throw new CliError('USAGE', '-o - writes the export to stdout, which --json reserves for its summary: pick one')
  const path = toStdout ? '-' : resolvePath(ctx.io.cwd, options.output)
  const sink: LineSink = toStdout ? stdoutSink(ctx) : fileSink(path)
  // an export stopped before its end line (Ctrl-C, SIGTERM, or the reader of `-o -` gone) fails: the
  // partial file is removed, and a stdout export does not report a success nobody received
  let interrupted: InterruptReason | undefined
  const unlisten = ctx.io.onInterrupt?.((reason) => {
    if (reason !== 'stdout-closed' || toStdout) interrupted ??= reason
  })
  const checkInterrupted = (): void => {
    if (interrupted === undefined) return
    throw new CliError(
      'FILE_ERROR',
      interrupted === 'stdout-closed'
        ? 'cannot write the export to stdout (its reader closed it, or writing failed) before the end line; the export is incomplete'
        : `the export was stopped by ${interrupted} before its end line; ${toStdout ? 'what went to stdout is incomplete' : `nothing was written to ${path}`}`,
      {
        hint:
          interrupted === 'stdout-closed'
            ? 'Keep the reader of `-o -` running until the export ends, or write to a file with -o <file>.'
            : 'Run the export again.',
      },
    )
  }
  const bar = createProgressBar(ctx.io, { json: ctx.json, title: 'exporting', unit: 'sessions' })
  let sessions = 0
  let events = 0
  let bytes = 0
  let conflicts = 0
  try {
    await ctx.withStore(async (store) => {
      let total = 1
      if (all && ctx.io.progressStream !== undefined && !ctx.json) {
        total = await countSessions(store)
      }
      const selection = all ? { all: true as const } : { sessionIds: [await resolveSessionId(store, session as string)] }
      for await (const line of exportSessions(store, selection)) {
        checkInterrupted()
        await sink.write(line)
        bytes += Buffer.byteLength(line) + 1
        if (line.startsWith('{"kind":"event"')) events++
        else if (line.startsWith('{"kind":"session"')) {
          sessions++
          // the export format has no place for recorded conflicts (refused writes): count what stays
          // behind (for --all, once below: one query, not one per session)
          if (!all) conflicts += (await store.conflicts((JSON.parse(line) as { id: string }).id)).length
          bar.update(sessions, Math.max(total, sessions))
        }
      }
      if (all) {
        conflicts = await store.countConflicts()
      }
    })
    if (toStdout) await sink.commit()
    checkInterrupted()
    if (!toStdout) await sink.commit()
  } catch (error) {
    await sink.abort().catch(() => {})
    throw error
  } finally {
    unlisten?.()
    bar.stop()
  }
  const left =
    conflicts === 0
      ? ''
      : `; ${conflicts} recorded conflict(s) (refused writes: audit evidence, \`message_conflict_attempt\`) are not part of the export format and stay in this database only`
  if (toStdout) {
    if (!ctx.json) ctx.io.err(`exported ${sessions} session(s), ${events} event(s)${left}\n`)
    return EXIT_CODES.ok
  }
  ctx.print(
    { file: path, sessions, events, bytes, conflictsNotExported: conflicts },
    () => `exported ${sessions} session(s), ${events} event(s) to ${path} (${(bytes / 1024).toFixed(1)} KB)${left}`,
  )
  return EXIT_CODES.ok
}
