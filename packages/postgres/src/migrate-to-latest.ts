import { TurnlogError } from '@turnlog/core'
import { Migrator, sql, type Kysely, type Migration, type MigrationProvider, type MigrationResult } from 'kysely'
import { mapDatabaseError, sqlState } from './map-database-error.js'
import * as m0001 from './migrations/0001_create_schema.js'
import * as m0002 from './migrations/0002_compute_append_links.js'
import * as m0003 from './migrations/0003_accept_duplicates_without_content.js'
import * as m0004 from './migrations/0004_repair_compaction_placement.js'
import * as m0005 from './migrations/0005_tenant_subscriptions.js'
import * as m0006 from './migrations/0006_check_fork_copies.js'
import * as m0007 from './migrations/0007_read_appends_only_sessions.js'
import * as m0008 from './migrations/0008_check_redaction_placeholders.js'
import * as m0009 from './migrations/0009_keep_custom_tool_calls.js'
import * as m0010 from './migrations/0010_hide_foreign_predecessors.js'

/** Every migration, in order. Names are `NNNN_verb_object`; released ones are never edited. */
const MIGRATIONS: Readonly<Record<string, Migration>> = {
  '0001_create_schema': m0001,
  '0002_compute_append_links': m0002,
  '0003_accept_duplicates_without_content': m0003,
  '0004_repair_compaction_placement': m0004,
  '0005_tenant_subscriptions': m0005,
  '0006_check_fork_copies': m0006,
  '0007_read_appends_only_sessions': m0007,
  '0008_check_redaction_placeholders': m0008,
  '0009_keep_custom_tool_calls': m0009,
  '0010_hide_foreign_predecessors': m0010,
}

/** Hands kysely's migrator a copy of {@link MIGRATIONS} (the migrations are compiled in, not read from files). */
const migrationProvider: MigrationProvider = { getMigrations: async () => ({ ...MIGRATIONS }) }

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

/** The parts of a driver error the report uses. */
interface ServerError {
  readonly detail?: unknown
}

/** The roles step's JSON detail (sql/roles.sql), when the failure is that step's. */
function rolesStep(error: unknown): { readonly missing: readonly string[]; readonly role: string | null } | undefined {
  const detail = (error as ServerError | null)?.detail
  if (typeof detail !== 'string' || !detail.startsWith('{')) return undefined
  try {
    const parsed = JSON.parse(detail) as { step?: unknown; missing?: unknown; role?: unknown }
    if (parsed.step !== 'roles') return undefined
    return {
      missing: Array.isArray(parsed.missing) ? parsed.missing.filter((m): m is string => typeof m === 'string') : [],
      role: typeof parsed.role === 'string' ? parsed.role : null,
    }
  } catch {
    return undefined
  }
}

/** The hint of a failed run: the roles step's own, else one about the SQLSTATE. */
function hintFor(state: string | undefined, roles: ReturnType<typeof rolesStep>): string {
  if (roles !== undefined && roles.missing.length === 0) {
    // the roles exist: what is missing is this login's membership in turnlog_owner
    return (
      `The roles step failed: role ${roles.role ?? '(this login)'} is not a member of turnlog_owner and may not grant it to itself. ` +
      'Have a DBA run the SQL printed by `turnlog migrate --roles-sql` (rolesSql({ migrator }) in @turnlog/postgres: it grants turnlog_owner to this login) ' +
      'once, as a superuser or a CREATEROLE role, then migrate again.'
    )
  }
  if (roles !== undefined) {
    return (
      'The roles step failed: creating cluster roles needs CREATEROLE. Have a DBA run the SQL printed by `turnlog migrate --roles-sql` ' +
      '(rolesSql() in @turnlog/postgres) once, as a superuser or a CREATEROLE role, then migrate again.'
    )
  }
  if (state === '42501') {
    return 'The migrating role lacks a privilege (see the cause): migrate as the owner of the database and a member of turnlog_owner (docs/operations.md).'
  }
  return 'Nothing was applied. Read the cause, fix it and migrate again.'
}

/**
 * The error of a failed run. kysely runs every pending migration in one transaction and marks the ones
 * that ran before the failing one `Success`; they were rolled back with it, so they are reported as
 * `RolledBack`, never as applied.
 */
export function migrationFailed(error: unknown, results: readonly MigrationResult[] | undefined): TurnlogError {
  const failed = (results ?? []).find((r) => r.status === 'Error')?.migrationName ?? null
  const state = sqlState(error)
  const roles = rolesStep(error)
  const cause = error instanceof Error ? error.message : String(error)
  const statuses = (results ?? []).map((r) => ({ name: r.migrationName, status: r.status === 'Success' ? 'RolledBack' : r.status }))
  const rolledBack = statuses.filter((r) => r.status === 'RolledBack').map((r) => r.name)
  const message =
    `turnlog migration ${failed ?? '(before any migration)'} failed${state === undefined ? '' : ` (SQLSTATE ${state})`}: ${cause}; ` +
    `nothing was applied${rolledBack.length === 0 ? '' : ` (rolled back with it: ${rolledBack.join(', ')})`}, the schema stays at its previous version`
  return new TurnlogError('MIGRATION_FAILED', message, {
    details: {
      results: statuses,
      failed,
      sqlState: state ?? null,
      step: roles !== undefined ? 'roles' : failed,
      ...(roles === undefined ? {} : { missingRoles: roles.missing, role: roles.role }),
      hint: hintFor(state, roles),
    },
    cause: error,
  })
}

/** kysely's Postgres migration lock (the advisory lock id of its PostgresAdapter). */
const MIGRATION_LOCK_ID = '3853314791062309107'

/** Whether the `turnlog` schema exists (null when that cannot be read: then nothing is cleaned up). */
async function schemaExists(db: Kysely<unknown>): Promise<boolean | null> {
  try {
    const { rows } = await sql<{ n: number }>`select count(*)::int as n from pg_catalog.pg_namespace where nspname = 'turnlog'`.execute(db)
    return (rows[0]?.n ?? 0) > 0
  } catch {
    return null
  }
}

/** The migration whose first step creates the cluster roles. */
const ROLES_MIGRATION = '0001_create_schema'

/**
 * What the roles step (sql/roles.sql, the first step of 0001) would raise for the current role, checked before anything is created: the
 * missing `turnlog_*` roles when it may not create roles (not a superuser, no `CREATEROLE`), or the
 * missing membership in `turnlog_owner` when it may not grant it to itself. The same conditions and
 * the same error shape (SQLSTATE 42501, a JSON detail with `step: 'roles'`) as the step itself, which
 * stays in the migration for a run this check does not cover. Undefined when the step can succeed or
 * the facts cannot be read (the migration then decides).
 */
async function rolesStepRefusal(db: Kysely<unknown>): Promise<(Error & { code: string; detail: string }) | undefined> {
  let facts: { role: string; can_create: boolean; can_grant: boolean; missing: string[] | string; member: boolean | null } | undefined
  try {
    const { rows } = await sql<NonNullable<typeof facts>>`
      select current_user::text as role,
             coalesce((select r.rolsuper or r.rolcreaterole from pg_catalog.pg_roles r where r.rolname = current_user), false) as can_create,
             coalesce((select r.rolsuper or r.rolcreaterole from pg_catalog.pg_roles r where r.rolname = current_user), false)
               or (exists (select 1 from pg_catalog.pg_roles where rolname = 'turnlog_owner')
                   and pg_catalog.pg_has_role(current_user, 'turnlog_owner', 'USAGE WITH ADMIN OPTION')) as can_grant,
             array(select n from unnest(array['turnlog_owner', 'turnlog_writer', 'turnlog_reader']) with ordinality as x(n, i)
                    where not exists (select 1 from pg_catalog.pg_roles where rolname = x.n) order by x.i) as missing,
             case when exists (select 1 from pg_catalog.pg_roles where rolname = 'turnlog_owner')
                  then pg_catalog.pg_has_role(current_user, 'turnlog_owner', 'MEMBER') end as member`.execute(db)
    facts = rows[0]
  } catch {
    return undefined
  }
  if (facts === undefined) return undefined
  const missing = Array.isArray(facts.missing)
    ? facts.missing
    : String(facts.missing)
        .replace(/^\{|\}$/g, '')
        .split(',')
        .filter((m) => m !== '')
  const refusal = (message: string, detail: Record<string, unknown>): Error & { code: string; detail: string } =>
    Object.assign(new Error(message), { code: '42501', detail: JSON.stringify({ step: 'roles', ...detail, role: facts?.role ?? null }) })
  if (missing.length > 0 && !facts.can_create) {
    return refusal(
      `turnlog roles step: the cluster roles ${missing.join(', ')} do not exist, and role ${facts.role} may not create them (CREATE ROLE needs CREATEROLE)`,
      { missing },
    )
  }
  if (missing.length === 0 && facts.member === false && !facts.can_grant) {
    return refusal(`turnlog roles step: role ${facts.role} is not a member of turnlog_owner and may not grant it to itself`, {
      missing: [],
      needs: 'grant turnlog_owner',
    })
  }
  return undefined
}

/**
 * After a failed run that found no `turnlog` schema: drops the schema kysely created for its own
 * bookkeeping before the migration transaction (it holds nothing else), so a failed first run leaves
 * the database as it was. Under kysely's migration lock, and only when no migration is recorded and the
 * schema holds only kysely's tables: a concurrent run that succeeded is never touched.
 */
async function dropEmptySchema(db: Kysely<unknown>): Promise<void> {
  await db.transaction().execute(async (tx) => {
    await sql`select pg_advisory_xact_lock(${sql.lit(MIGRATION_LOCK_ID)}::bigint)`.execute(tx)
    const { rows } = await sql<{ other: number; recorded: number | null }>`
      select (select count(*)::int from pg_catalog.pg_class c
               where c.relnamespace = n.oid and c.relname not in ('schema_migrations', 'schema_migrations_lock',
                                                                 'schema_migrations_pkey', 'schema_migrations_lock_pkey'))
             + (select count(*)::int from pg_catalog.pg_proc p where p.pronamespace = n.oid) as other,
             (select count(*)::int from turnlog.schema_migrations) as recorded
        from pg_catalog.pg_namespace n where n.nspname = 'turnlog'`.execute(tx)
    const row = rows[0]
    if (row && row.other === 0 && row.recorded === 0) await sql`drop schema turnlog cascade`.execute(tx)
  })
}

/**
 * Brings the `turnlog` schema up to date: kysely's Migrator runs every pending migration in one
 * transaction under an advisory lock, so concurrent callers are safe. Throws `MIGRATION_FAILED` (the
 * cause kept) when a migration fails: nothing is applied (the migrations before the failing one in the
 * same run are reported `RolledBack`), the schema stays at the previous version, and a schema this call
 * created for kysely's bookkeeping is dropped again. `details`: `results`, `failed` (the migration),
 * `sqlState`, `step` (`'roles'` when the cluster roles step failed, with `missingRoles` and `role`;
 * else the migration's name) and `hint`. A connection that
 * never worked throws its mapped database error instead (`DB_TRANSIENT`, `DB_TIMEOUT`, `DB_ERROR`).
 * @example
 * ```ts
 * const { applied } = await migrateToLatest(db) // throws MIGRATION_FAILED (nothing applied) on a failure
 * console.log(applied.length === 0 ? 'up to date' : `applied ${applied.join(', ')}`)
 * ```
 */
export async function migrateToLatest(db: Kysely<unknown>): Promise<MigrateResult> {
  const migrator = new Migrator({
    db,
    provider: migrationProvider,
    migrationTableSchema: 'turnlog',
    migrationTableName: 'schema_migrations',
    migrationLockTableName: 'schema_migrations_lock',
  })
  const existed = await schemaExists(db)
  // a first run whose roles step cannot succeed is refused before kysely creates anything
  if (existed === false) {
    const refused = await rolesStepRefusal(db)
    if (refused !== undefined) {
      throw migrationFailed(
        refused,
        Object.keys(MIGRATIONS).map((name) => ({
          migrationName: name,
          direction: 'Up' as const,
          status: name === ROLES_MIGRATION ? ('Error' as const) : ('NotExecuted' as const),
        })),
      )
    }
  }
  const { error, results } = await migrator.migrateToLatest()
  if (error !== undefined) {
    if (isConnectionFailure(error, results)) throw mapDatabaseError(error)
    if (existed === false) await dropEmptySchema(db).catch(() => {})
    throw migrationFailed(error, results)
  }
  return {
    applied: (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName),
    known: Object.keys(MIGRATIONS),
  }
}
