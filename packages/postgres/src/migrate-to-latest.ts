import { TurnlogError } from '@turnlog/core'
import { Migrator, type Kysely, type Migration, type MigrationProvider, type MigrationResult } from 'kysely'
import { mapDatabaseError, sqlState } from './map-database-error.js'
import * as m0001 from './migrations/0001_create_event_log.js'
import * as m0002 from './migrations/0002_create_subscriptions.js'
import * as m0003 from './migrations/0003_secure_event_log.js'
import * as m0004 from './migrations/0004_create_batch_rebuild.js'
import * as m0005 from './migrations/0005_add_group_append.js'
import * as m0006 from './migrations/0006_speed_up_load.js'
import * as m0007 from './migrations/0007_speed_up_import.js'
import * as m0008 from './migrations/0008_unify_message_ids.js'

/** Every migration, in order. Names are `NNNN_verb_object`; released ones are never edited. */
const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_create_event_log': m0001,
  '0002_create_subscriptions': m0002,
  '0003_secure_event_log': m0003,
  '0004_create_batch_rebuild': m0004,
  '0005_add_group_append': m0005,
  '0006_speed_up_load': m0006,
  '0007_speed_up_import': m0007,
  '0008_unify_message_ids': m0008,
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

/**
 * True when the migrator failed because it never got a working connection (server down, bad host,
 * bad credentials, no such database): that is not a failed migration, and callers need its own code.
 */
function isConnectionFailure(error: unknown, results: readonly MigrationResult[] | undefined): boolean {
  if ((results ?? []).some((r) => r.status === 'Error')) return false
  const code = mapDatabaseError(error).code
  if (code === 'DB_TRANSIENT' || code === 'DB_TIMEOUT') return true
  const state = sqlState(error)
  if (state !== undefined) return state.startsWith('28') || state === '3D000'
  const nodeCode = (error as { code?: unknown } | null)?.code
  return typeof nodeCode === 'string' && /^E[A-Z]+$/.test(nodeCode)
}

function describe(results: readonly MigrationResult[] | undefined): string {
  if (!results || results.length === 0) return 'no migration ran'
  return results.map((r) => `${r.migrationName}: ${r.status}`).join(', ')
}

/**
 * Brings the `turnlog` schema up to date: kysely's Migrator runs every pending migration in one
 * transaction under an advisory lock, so concurrent callers are safe. Throws `MIGRATION_FAILED` (the
 * cause kept) when a migration fails; the schema stays at the previous version. A connection that
 * never worked throws its mapped database error instead (`DB_TRANSIENT`, `DB_TIMEOUT`, `DB_ERROR`).
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
    if (isConnectionFailure(error, results)) throw mapDatabaseError(error)
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
