import { migrateToLatest, rolesSql } from '@turnlog/postgres'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'

/** Options of `turnlog migrate`. */
export interface MigrateCommandOptions {
  /** Print the DBA's roles SQL (`rolesSql`) instead of migrating; connects to nothing. */
  readonly rolesSql?: boolean | undefined
}

/** The login of a Postgres URL, when it names one. */
function loginOf(connectionString: string): string | undefined {
  try {
    const user = decodeURIComponent(new URL(connectionString).username)
    return user === '' ? undefined : user
  } catch {
    return undefined
  }
}

/**
 * `turnlog migrate`: brings the `turnlog` schema up to date (one transaction, under an advisory lock,
 * so concurrent runs are safe) and reports what it applied. A failed run throws `MIGRATION_FAILED`
 * (nothing applied; the CLI prints the cause, its SQLSTATE and the hint, and exits non-zero).
 * `--roles-sql` prints the SQL that creates the cluster roles and grants `turnlog_owner` to the
 * URL's login, for a DBA to run once when the migrating login may not `CREATEROLE`.
 */
export async function runMigrate(ctx: CommandContext, options: MigrateCommandOptions = {}): Promise<ExitCode> {
  const target = ctx.target()
  if (options.rolesSql === true) {
    const migrator = target.kind === 'postgres' ? loginOf(target.connectionString) : undefined
    const text = rolesSql(migrator === undefined ? {} : { migrator })
    ctx.print({ rolesSql: text, migrator: migrator ?? null }, () => text)
    return EXIT_CODES.ok
  }
  const result = await ctx.withStore((store) => migrateToLatest(store.db), { migrate: false, target, create: true })
  ctx.print({ database: { kind: target.kind, where: target.where }, applied: result.applied, known: result.known }, () =>
    result.applied.length === 0
      ? `schema is up to date (${result.known.length} migration(s)) on ${target.kind} ${target.where}`
      : `applied ${result.applied.length} migration(s) on ${target.kind} ${target.where}:\n${result.applied.map((m) => `  ${m}`).join('\n')}`,
  )
  return EXIT_CODES.ok
}
