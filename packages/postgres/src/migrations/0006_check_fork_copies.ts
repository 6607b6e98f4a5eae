import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The function 0006 replaces, as `sql/` holds it now. */
const FILE = 'functions/events_claim_ids.sql'

/**
 * 0006: the claim trigger's function `events_claim_ids` also checks a fork's copy and every append into
 * a fork session: a copy must name the session's fork parent in `data.inheritedFrom`, and a session
 * holds a message id once (`TLA01` otherwise). Before it, a raw `INSERT` could put an id into a second
 * session under any copy label, or append an id the session held as a copy (the projection then
 * showed it live where the fold skips it: docs/schema.md, "live_messages"). Existing rows are not
 * checked (the audit reports such sessions). Replaces the function in place (owner and privileges
 * stay); a no-op on a database 0001 created from these files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(replacementSql()).execute(db)
}

/** {@link FILE} made `create or replace function`. */
function replacementSql(): string {
  return schemaFile(FILE).replace(/^create function /m, 'create or replace function ')
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0006_check_fork_copies cannot be reverted')
}
