import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/**
 * The functions 0008 creates or replaces (same signatures), as `sql/` holds them now, in this order:
 * `redact_message`'s body calls `placeholder_follows`. `json_operable` now leaves an escaped surrogate
 * pair for the JSON operators (it made `?d83d?de00` of one, so a payload stored with an emoji escaped, as
 * Python writes it, never matched its placeholder's own character). `project_event` places a pending
 * summary final only when it was finalized after its append (a finalize before it named a message not
 * yet there, which the spec skips: a log written around the store placed such a summary final).
 */
const FILES = [
  'functions/project_event.sql',
  'functions/json_operable.sql',
  'functions/placeholder_follows.sql',
  'functions/is_redaction_placeholder.sql',
  'functions/redact_message.sql',
] as const

/**
 * The new function's owner, as sql/ownership.sql gives every function. Like the other placeholder
 * checks (`is_redaction_placeholder`, `is_structural_placeholder`, `json_operable`) it keeps the default
 * privileges: an immutable function of its arguments, reading no table.
 */
const NEW_FUNCTION_SQL = `
alter function turnlog.placeholder_follows(json, json, text) owner to turnlog_owner;
`

/**
 * 0008: `redact_message` checks that every placeholder also FOLLOWS the payload it replaces (an event's
 * payload, a conflict's incoming payload): `placeholder_follows`, the payload with content removed and
 * nothing added (no key the original lacks, no string but `'[redacted]'`, `'{}'` or the original's own,
 * every number 0, no longer array). Before it, a tenant's writer calling the function with raw SQL could
 * pass a "placeholder" of the right shape that carried content (in an object under a tool call's `id`,
 * in a key of a structural placeholder), changed the message's role or forged a tool call, and the
 * chain still verified (security.md, "Redaction"). `is_redaction_placeholder` also requires a chat
 * tool call's `id`, `call_id`, `type` and function `name` to be strings, as core's `isRedactedPayload`
 * (which now checks the first three too). Existing rows are not checked (see security.md). A no-op on a
 * database 0001 created from these files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(replacementSql()).execute(db)
}

/** The files of {@link FILES}, each `create function` made `create or replace function`, and the owner. */
function replacementSql(): string {
  return FILES.map((file) => schemaFile(file).replace(/^create function /m, 'create or replace function ')).join('\n') + NEW_FUNCTION_SQL
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0008_check_redaction_placeholders cannot be reverted')
}
