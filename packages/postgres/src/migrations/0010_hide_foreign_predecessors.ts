import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The function 0010 replaces, as `sql/` holds it now. */
const FILES = ['functions/chain_predecessor.sql'] as const

/**
 * 0010: `chain_predecessor` answers a caller that may not act on the session (another tenant's, or one
 * that does not exist) as the row policy does (`42501`) where it raised `TLC01` (no predecessor) or
 * `40001` (a later transaction wrote it). The link trigger calls it as the owner before the policy
 * checks the inserted row, so a tenant's writer inserting an event with raw SQL into another tenant's
 * session learnt from the error whether that session existed, how long its log was (`42501` up to its
 * version + 1, `TLC01` past it) and whether it had been appended to since the writer's transaction
 * began (security.md, "Tenant isolation"). Callers that may act on the session (the store, the owner,
 * PGlite's superuser) get the same errors as before; only the error paths pay for the check. Replaces
 * the function in place (signature, owner and privileges stay); reads no row. A no-op on a database
 * 0001 created from these files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(replacementSql()).execute(db)
}

/** The files of {@link FILES}, each `create function` made `create or replace function`. */
function replacementSql(): string {
  return FILES.map((file) => schemaFile(file).replace(/^create function /m, 'create or replace function ')).join('\n')
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0010_hide_foreign_predecessors cannot be reverted')
}
