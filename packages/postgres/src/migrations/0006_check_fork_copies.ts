import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The functions 0006 creates or replaces, as `sql/` holds them now (the new one first: the other calls it). */
const FILES = ['functions/claims_id.sql', 'functions/events_claim_ids.sql'] as const

/** The new function's owner and privileges, as sql/ownership.sql and sql/grants.sql give them. */
const PRIVILEGES_SQL = `
alter function turnlog.claims_id(uuid, bigint, uuid, text, uuid) owner to turnlog_owner;
revoke all on function turnlog.claims_id(uuid, bigint, uuid, text, uuid) from public;
`

/**
 * 0006: the claim trigger `events_claim_ids` checks a fork's copy and every append into a fork session
 * through the new `claims_id`: a copy must name the session's fork parent in `data.inheritedFrom`, and a
 * session holds a message id once (`TLA01` otherwise). Before it, a raw `INSERT` could put an id into a
 * second session under any copy label, or append an id the session held as a copy (the projection then
 * showed it live where the fold skips it: docs/schema.md, "live_messages"). Existing rows are not
 * checked (the audit reports such sessions). A no-op on a database 0001 created from these files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(migrationSql()).execute(db)
}

/** The files of {@link FILES}, each `create function` made `create or replace function`, then {@link PRIVILEGES_SQL}. */
function migrationSql(): string {
  const functions = FILES.map((file) => schemaFile(file).replace(/^create function /m, 'create or replace function ')).join('\n')
  return functions + PRIVILEGES_SQL
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0006_check_fork_copies cannot be reverted')
}
