import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { shortId } from '../format-text.js'
import { createProgressBar } from '../progress-bar.js'
import { resolveSessionId } from '../resolve-session-id.js'

/** Options of `turnlog rebuild`. */
export interface RebuildCommandOptions {
  /** One session; default every session. */
  readonly session?: string
  /** Only compare the projections with the fold of the log; write nothing. */
  readonly verify?: boolean
}

/**
 * `turnlog rebuild`: recomputes the inline projections (live lists) from the event log, or with
 * `--verify` reports where they differ without writing. Drift found by `--verify` exits 1.
 */
export async function runRebuild(ctx: CommandContext, options: RebuildCommandOptions): Promise<ExitCode> {
  const verify = options.verify === true
  const bar = createProgressBar(ctx.io, { json: ctx.json, title: verify ? 'verifying' : 'rebuilding', unit: 'sessions' })
  const result = await ctx
    .withStore(async (store) =>
      store.rebuild({
        ...(options.session === undefined ? {} : { sessionId: await resolveSessionId(store, options.session, '--session') }),
        verify,
        onProgress: (p) => bar.update(p.done, p.total, shortId(p.sessionId)),
      }),
    )
    .finally(() => bar.stop())
  ctx.print({ verify, sessions: result.sessions, rewritten: result.rewritten, drift: result.drift }, () => {
    const lines = [
      verify
        ? `verified ${result.sessions} session(s): ${result.drift.length === 0 ? 'every projection matches its log' : `${result.drift.length} projection(s) differ from their log`}`
        : `rebuilt ${result.rewritten} session projection(s) from the log${result.drift.length === 0 ? '; none had drifted' : `; ${result.drift.length} had drifted and are repaired`}`,
    ]
    for (const d of result.drift) lines.push(`  ${d.sessionId}: ${d.explanation}`)
    if (verify && result.drift.length > 0)
      lines.push('repair with: turnlog rebuild' + (options.session === undefined ? '' : ` --session ${options.session}`))
    return lines.join('\n')
  })
  return verify && result.drift.length > 0 ? EXIT_CODES.findings : EXIT_CODES.ok
}
