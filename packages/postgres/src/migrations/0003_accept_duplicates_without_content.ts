import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The functions 0003 replaces, as `sql/` holds them now. */
const FILES = ['functions/append_messages.sql', 'functions/append_batches.sql'] as const

/**
 * 0003: `append_messages` and `append_batches` accept a message without its content (payload and data
 * JSON `null`) when it is a duplicate, and refuse it with `TLP01` when it is new. The store sends a
 * message it saw stored in the session that way, so a re-sent turn travels as ids and content hashes
 * (docs/performance.md, "retry"). Replaces both functions in place (signatures, owner and privileges
 * stay); a no-op on a database 0001 created from these files.
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
  throw new Error('0003_accept_duplicates_without_content cannot be reverted')
}
