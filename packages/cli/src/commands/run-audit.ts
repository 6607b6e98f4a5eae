import { SEVERITIES, audit, exitCodeFor, renderReportText, type AuditReport, type Severity } from '@turnlog/audit'
import { CliError } from '../cli-error.js'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { shortId } from '../format-text.js'
import { createProgressBar } from '../progress-bar.js'
import { jsonRecords, readInputFile, utf8Text } from '../read-input-file.js'
import { countSessions } from '../count-sessions.js'
import { resolveSessionId } from '../resolve-session-id.js'

/** Options of `turnlog audit`. */
export interface AuditCommandOptions {
  readonly all?: boolean
  /** A JSONL (or JSON array) file of the messages the user saw, to reconcile with the log. */
  readonly transcript?: string
  readonly failOn: Severity
}

/**
 * `turnlog audit`: runs the audit on one session or all of them. Prints the report (its stable JSON
 * form under `--json`) and exits 1 when a finding is at or over `--fail-on`.
 */
export async function runAudit(ctx: CommandContext, session: string | undefined, options: AuditCommandOptions): Promise<ExitCode> {
  const all = options.all === true
  if (all === (session !== undefined)) {
    throw new CliError('USAGE', all ? 'give a session id or --all, not both' : 'audit needs a session id or --all', {
      hint: 'turnlog audit <session>  or  turnlog audit --all',
    })
  }
  if (all && options.transcript !== undefined) {
    throw new CliError('USAGE', '--transcript reconciles one session: give a session id, not --all')
  }
  const transcript =
    options.transcript === undefined
      ? undefined
      : jsonRecords(utf8Text(await readInputFile(ctx.io.cwd, options.transcript), options.transcript))
  const bar = createProgressBar(ctx.io, { json: ctx.json, title: 'auditing', unit: 'sessions' })
  const report: AuditReport = await ctx
    .withStore(async (store) => {
      let total: number | undefined
      if (all && ctx.io.progressStream !== undefined && !ctx.json) {
        // the audit pages through the store without a total: count once, for the bar
        total = await countSessions(store)
      }
      return audit(store, all ? { all: true } : await resolveSessionId(store, session as string), {
        ...(transcript === undefined ? {} : { transcript }),
        onProgress: (p) => bar.update(p.done, p.total ?? total ?? p.done, shortId(p.sessionId)),
      })
    })
    .finally(() => bar.stop())
  const code = exitCodeFor(report, options.failOn)
  ctx.print(report, () => {
    const failing = report.findings.filter((f) => SEVERITIES.indexOf(f.severity) >= SEVERITIES.indexOf(options.failOn)).length
    return renderReportText(report) + (code === 0 ? '' : `exit 1: ${failing} finding(s) at or over --fail-on ${options.failOn}\n`)
  })
  return code === 0 ? EXIT_CODES.ok : EXIT_CODES.findings
}
