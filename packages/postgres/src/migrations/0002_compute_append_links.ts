import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The functions 0002 creates or replaces, as `sql/` holds them now. */
const FILES = [
  'functions/caller_sees_all.sql',
  'functions/caller_may_access.sql',
  'functions/append_messages.sql',
  'functions/append_batches.sql',
  'functions/events_project.sql',
] as const

/** The one new function's owner and privileges, as sql/ownership.sql and sql/grants.sql give them. */
const NEW_FUNCTION_SQL = `
alter function turnlog.caller_sees_all(text) owner to turnlog_owner;
revoke all on function turnlog.caller_sees_all(text) from public;
`

/**
 * 0002: `append_messages` and `append_batches` run as the owner and compute the chain links in their
 * own INSERT (the row trigger skips rows the owner inserts with a link), applying the row policies'
 * tenant rule themselves, and `events_project` projects a statement of appends only with one plain
 * INSERT (docs/performance.md, "append"). The rule "this role sees every session" is one function,
 * `caller_sees_all`, which `caller_may_access` and the append functions call. Replaces the changed
 * functions in place (their signatures, owner and privileges stay) and creates the new one with the
 * owner and privileges the baseline gives, so it brings a 0001 database to the `sql/` state and is a
 * no-op on a database 0001 created from these files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(replacementSql()).execute(db)
}

/** The files of {@link FILES}, each `create function` made `create or replace function`. */
function replacementSql(): string {
  return FILES.map((file) => schemaFile(file).replace(/^create function /m, 'create or replace function ')).join('\n') + NEW_FUNCTION_SQL
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0002_compute_append_links cannot be reverted')
}
