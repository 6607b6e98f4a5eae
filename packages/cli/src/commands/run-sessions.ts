import type { SessionInfo } from '@turnlog/core'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { columns, shortId } from '../format-text.js'

/** Options of `turnlog sessions`. */
export interface SessionsOptions {
  /** Page size (1–1000). */
  readonly limit: number
  /** Keyset cursor: the `next` of the previous page. */
  readonly after?: string
  /** Only this tenant's sessions. */
  readonly tenant?: string
  /** Every page, not one. */
  readonly all?: boolean
}

function sessionJson(s: SessionInfo): Record<string, unknown> {
  return { ...s }
}

/** `turnlog sessions`: lists sessions one keyset page at a time (or all of them with `--all`). */
export async function runSessions(ctx: CommandContext, options: SessionsOptions): Promise<ExitCode> {
  const { sessions, next } = await ctx.withStore(async (store) => {
    const out: SessionInfo[] = []
    let after = options.after
    for (;;) {
      const page = await store.sessions({
        limit: options.limit,
        ...(after === undefined ? {} : { after }),
        ...(options.tenant === undefined ? {} : { tenantId: options.tenant }),
      })
      out.push(...page.sessions)
      if (options.all !== true || page.next === null) return { sessions: out, next: page.next }
      after = page.next
    }
  })
  ctx.print({ sessions: sessions.map(sessionJson), next }, () => {
    if (sessions.length === 0)
      return options.after === undefined ? 'no sessions yet (run `turnlog demo` or `turnlog import`)' : 'no more sessions'
    const rows = [['SESSION', 'VERSION', 'LIVE', 'UPDATED', 'FORKED FROM']]
    for (const s of sessions) {
      rows.push([
        s.sessionId,
        String(s.version),
        String(s.liveCount),
        s.updatedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z'),
        s.parent === null ? '' : `${s.parent.sessionId} @v${s.parent.version} (${shortId(s.parent.at)})`,
      ])
    }
    let text = columns(rows)
    if (next !== null) {
      const tenant = options.tenant === undefined ? '' : ` --tenant ${JSON.stringify(options.tenant)}`
      text += `\n\nmore: turnlog sessions --after ${next}${options.limit === 50 ? '' : ` --limit ${options.limit}`}${tenant}`
    }
    return text
  })
  return EXIT_CODES.ok
}
