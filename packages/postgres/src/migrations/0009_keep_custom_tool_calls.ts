import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The function 0009 replaces, as `sql/` holds it now. */
const FILES = ['functions/is_redaction_placeholder.sql'] as const

/**
 * 0009: `is_redaction_placeholder` accepts the chat placeholder of an OpenAI custom tool call, which core's
 * `redactedPayload` now makes `{ id, type: 'custom', custom: { name, input: '[redacted]' } }` (before, it
 * dropped `custom`, a member the provider requires, so a session holding a redacted custom call could not
 * be sent again: security.md, "Redaction"). `custom` must be exactly `{ name, input }`, `name` a string
 * and `input` `'[redacted]'`; a call without it is still accepted (placeholders stored before). Replaces the
 * function in place (signature, owner and privileges stay); reads no row. A no-op on a database 0001
 * created from these files.
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
  throw new Error('0009_keep_custom_tool_calls cannot be reverted')
}
