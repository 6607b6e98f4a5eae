import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { CommandContext } from '../command-context.js'
import type { DatabaseTarget } from '../resolve-database.js'

/**
 * Where the demo writes: the database named on the command line (kept), else a temporary PGlite data
 * directory removed by `cleanup`.
 */
export async function chooseDemoTarget(
  ctx: CommandContext,
): Promise<{ target: DatabaseTarget; kept: boolean; cleanup: () => Promise<void> }> {
  const { databaseUrl, dataDir } = ctx.options
  if (databaseUrl !== undefined || dataDir !== undefined) {
    // the same rules as every command, but only the command line: a demo never writes into the
    // database of $TURNLOG_DATABASE_URL / $DATABASE_URL by accident
    return { target: ctx.target(), kept: true, cleanup: async () => {} }
  }
  const dir = await mkdtemp(join(tmpdir(), 'turnlog-demo-'))
  return {
    target: { kind: 'embedded', dataDir: dir, where: dir, source: '--data-dir' },
    kept: false,
    cleanup: () => rm(dir, { recursive: true, force: true }),
  }
}
