import { readFileSync } from 'node:fs'

/**
 * The files of the baseline schema under the package's `sql/` directory, in the order the baseline
 * migration runs them: the roles step, the schema, tables, functions (after the tables: a function may
 * take a table's row type, and SQL-language bodies are checked against the tables when created),
 * triggers, row level security, ownership, privileges. Every `.sql` file under `sql/` is listed once
 * (a test checks it).
 */
export const SCHEMA_FILES: readonly string[] = [
  'roles.sql',
  'schema.sql',
  'tables/sessions.sql',
  'tables/events.sql',
  'tables/live_messages.sql',
  'tables/conflicts.sql',
  'tables/subscriptions.sql',
  'tables/tenant_roles.sql',
  'tables/message_ids.sql',
  // the chain
  'functions/chain_link.sql',
  'functions/chain_predecessor.sql',
  'functions/events_link.sql',
  // tenant checks
  'functions/caller_role.sql',
  'functions/bound_tenant.sql',
  'functions/caller_sees_all.sql',
  'functions/caller_may_access.sql',
  'functions/accessible_session_tenant.sql',
  'functions/tenant_roles_check.sql',
  // the projection and rebuild
  'functions/project_event.sql',
  'functions/events_project.sql',
  'functions/rebuild_session_unchecked.sql',
  'functions/rebuild_session.sql',
  'functions/rebuild_sessions_unchecked.sql',
  'functions/rebuild_sessions.sql',
  'functions/rebuild_read.sql',
  // appends, the message id arbiter, subscriptions' wake-ups and lock order
  'functions/append_messages.sql',
  'functions/append_batches.sql',
  'functions/events_claim_ids.sql',
  'functions/events_notify.sql',
  // subscription checkpoints (since 0005)
  'functions/subscription_create.sql',
  'functions/subscription_move.sql',
  'functions/subscription_renew_lease.sql',
  'functions/subscription_record_error.sql',
  'functions/subscription_drop.sql',
  'functions/subscription_rebase.sql',
  'functions/sessions_lock_before_update.sql',
  // reads
  'functions/load_session.sql',
  'functions/load_live.sql',
  // redaction
  'functions/json_operable.sql',
  'functions/is_structural_placeholder.sql',
  'functions/is_redaction_placeholder.sql',
  'functions/placeholder_follows.sql',
  'functions/placeholder_digest.sql',
  'functions/lock_message_sessions.sql',
  'functions/redact_message.sql',
  // import
  'functions/import_link_mismatch.sql',
  'functions/import_events.sql',
  'triggers/events.sql',
  'triggers/sessions.sql',
  'triggers/tenant_roles.sql',
  'policies/tenant_isolation.sql',
  'policies/subscriptions.sql',
  'ownership.sql',
  'grants.sql',
]

/**
 * The directory of the schema's `.sql` files: `sql/` next to `src/` and `dist/` in the package (it ships
 * in the package's `files`), so the same relative path works from the compiled `dist/` and from the
 * TypeScript sources the tests run.
 */
export const SCHEMA_DIR = new URL('../sql/', import.meta.url)

/** The text of one schema file (a path of {@link SCHEMA_FILES}). */
export function schemaFile(file: string): string {
  return readFileSync(new URL(file, SCHEMA_DIR), 'utf8')
}

/** The whole baseline schema: every file of {@link SCHEMA_FILES}, in order, as one SQL script. */
export function schemaSql(): string {
  return SCHEMA_FILES.map((file) => `-- ${file}\n${schemaFile(file)}`).join('\n')
}
