import { sql, type Kysely } from 'kysely'
import { schemaFile } from '../schema-sql.js'

/** The functions 0007 replaces in place (same signature), as `sql/` holds them now. */
const REPLACED_FILES = [
  'functions/events_project.sql',
  'functions/rebuild_sessions_unchecked.sql',
  'functions/rebuild_session_unchecked.sql',
  'functions/load_session.sql',
] as const

/** The function 0007 drops and creates again: its result gains a column. */
const RECREATED_FILE = 'functions/rebuild_read.sql'

/**
 * The column, false for every session that exists before 0007 (no log is read: those sessions load
 * through the projection, as before, until a `rebuild` sets it from their logs) and true by default
 * for the sessions created after it (a new session has no event yet).
 */
const COLUMN_SQL = `
alter table turnlog.sessions add column if not exists appends_only boolean not null default false;
alter table turnlog.sessions alter column appends_only set default true;
`

/** `rebuild_read`'s owner and privileges as sql/ownership.sql and sql/grants.sql give them. */
const PRIVILEGES_SQL = `
alter function turnlog.rebuild_read(uuid[]) owner to turnlog_owner;
revoke all on function turnlog.rebuild_read(uuid[]) from public;
grant execute on function turnlog.rebuild_read(uuid[]) to turnlog_writer, turnlog_reader;
`

/**
 * 0007: `sessions.appends_only`, true while every event of a session is a `message_appended` that is
 * not deferred. Such a session's live list is its events in seq order, so `load` reads them with one
 * primary-key range read of `events` instead of joining the projection with them (docs/performance.md,
 * "load"). The projection trigger clears the flag when a statement brings a session any other event;
 * `rebuild` sets it from the log, and `rebuild --verify` (so the audit) reports a flag that disagrees
 * with the log as drift. A no-op but for `rebuild_read`'s text on a database 0001 created from these
 * files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(migrationSql()).execute(db)
}

/** The column, the replaced functions, `rebuild_read` dropped and created, its privileges. */
function migrationSql(): string {
  const replaced = REPLACED_FILES.map((file) => schemaFile(file).replace(/^create function /m, 'create or replace function '))
  return [COLUMN_SQL, ...replaced, 'drop function turnlog.rebuild_read(uuid[]);', schemaFile(RECREATED_FILE), PRIVILEGES_SQL].join('\n')
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0007_read_appends_only_sessions cannot be reverted')
}
