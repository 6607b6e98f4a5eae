import { TurnlogError } from '@turnlog/core'
import { Migrator, type Kysely, type Migration, type MigrationProvider, type MigrationResult } from 'kysely'
import * as m0001 from './migrations/0001_create_event_log.js'

/** Every migration, in order. Names are `NNNN_verb_object`; released ones are never edited. */
const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_create_event_log': m0001,
}

class StaticMigrationProvider implements MigrationProvider {
  async getMigrations(): Promise<Record<string, Migration>> {
    return { ...MIGRATIONS }
  }
}

/** Result of {@link migrateToLatest}. */
export interface MigrateResult {
  /** Migrations applied by this call, in order. */
  readonly applied: readonly string[]
  /** Every known migration name. */
  readonly known: readonly string[]
}

function describe(results: readonly MigrationResult[] | undefined): string {
  if (!results || results.length === 0) return 'no migration ran'
  return results.map((r) => `${r.migrationName}: ${r.status}`).join(', ')
}

/**
 * Brings the `turnlog` schema up to date: kysely's Migrator runs every pending migration in one
 * transaction under an advisory lock, so concurrent callers are safe. Throws `MIGRATION_FAILED` (the
 * cause kept) when a migration fails; the schema stays at the previous version.
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<MigrateResult> {
  const migrator = new Migrator({
    db,
    provider: new StaticMigrationProvider(),
    migrationTableSchema: 'turnlog',
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  })
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) {
    throw new TurnlogError('MIGRATION_FAILED', `turnlog migration failed (${describe(results)})`, {
      details: { results: (results ?? []).map((r) => ({ name: r.migrationName, status: r.status })) },
      cause: error,
    })
  }
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
    known: Object.keys(MIGRATIONS),
  }
}
