import { migrateToLatest } from '@turnlog/postgres'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'

/**
 * `turnlog migrate`: brings the `turnlog` schema up to date (one transaction, under an advisory lock,
 * so concurrent runs are safe) and reports what it applied.
 */
export async function runMigrate(ctx: CommandContext): Promise<ExitCode> {
  const target = ctx.target()
  const result = await ctx.withStore((store) => migrateToLatest(store.db), { migrate: false, target, create: true })
  ctx.print(
    { database: { kind: target.kind, where: target.where }, applied: result.applied, known: result.known },
    () =>
      result.applied.length === 0
        ? `schema is up to date (${result.known.length} migration(s)) on ${target.kind} ${target.where}`
        : `applied ${result.applied.length} migration(s) on ${target.kind} ${target.where}:\n${result.applied.map((m) => `  ${m}`).join('\n')}`,
  )
  return EXIT_CODES.ok
}
