import { sql, type Kysely } from 'kysely'
import { schemaSql } from '../schema-sql.js'

/**
 * 0001: the whole schema (the baseline): the roles step, the tables, functions, triggers, row level
 * security, ownership and privileges, read from the package's `sql/` files in the order of
 * `SCHEMA_FILES` (docs/schema.md). From the first release on, a schema change is a new migration.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(schemaSql()).execute(db)
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0001_create_schema cannot be reverted')
}
