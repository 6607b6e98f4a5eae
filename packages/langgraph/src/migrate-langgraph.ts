import { TurnlogError } from '@turnlog/core'
import { Migrator, type Kysely, type Migration, type MigrationProvider } from 'kysely'
import * as m0001 from './migrations/0001_create_tables.js'
import * as m0002 from './migrations/0002_messages_in_checkpoint_row.js'
import * as m0003 from './migrations/0003_checkpoint_json.js'
import * as m0004 from './migrations/0004_branch_blob_keys.js'

/** The schema that holds the saver's tables. */
export const LANGGRAPH_SCHEMA = 'turnlog_langgraph'

/** Every migration of the saver's schema, in order; released ones are never edited. */
const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_create_tables': m0001,
  '0002_messages_in_checkpoint_row': m0002,
  '0003_checkpoint_json': m0003,
  '0004_branch_blob_keys': m0004,
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...MIGRATIONS }
  }
}

/** Result of {@link migrateLangGraph}. */
export interface MigrateLangGraphResult {
  /** Migrations applied by this call, in order (empty when the schema was current). */
  readonly applied: readonly string[]
}

/**
 * Creates or upgrades the saver's schema (`turnlog_langgraph`) with kysely's migrator: every pending
 * migration in one transaction under kysely's advisory lock; a failure applies nothing and throws
 * `MIGRATION_FAILED` with the cause. Runs on the turnlog store's own Kysely instance (Postgres or PGlite).
 */
export async function migrateLangGraph(db: Kysely<unknown>): Promise<MigrateLangGraphResult> {
  // the migrator creates the schema when it is missing, and only then (a login without CREATE on the
  // database gets MIGRATION_FAILED from it, with the driver's error as the cause, like every other failure)
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(),
    migrationTableSchema: LANGGRAPH_SCHEMA,
    migrationTableName: 'migrations',
    migrationLockTableName: 'migration_lock',
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) {
    const failed = (results ?? []).find((r) => r.status === 'Error')?.migrationName ?? null
    throw new TurnlogError(
      'MIGRATION_FAILED',
      `turnlog_langgraph migration ${failed ?? '(before any migration)'} failed: ${String(error)}`,
      {
        details: { failed },
        cause: error,
      },
    )
  }
  return { applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName) }
}
