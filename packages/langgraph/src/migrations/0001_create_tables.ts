import { sql, type Kysely } from 'kysely'

/**
 * The saver's tables in the `turnlog_langgraph` schema. The `messages` channel's values are not here:
 * a blob row of type `turnlog` says the value lives in turnlog, and a checkpoint row names the session
 * and the version its messages are (`session_id`, `session_version`).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  // a LangGraph thread: its root turnlog session (also the scope of its message ids); a deleted thread
  // keeps its row (deleted_at) so its sessions, whose messages were retracted, stay findable
  await sql`
    create table turnlog_langgraph.threads (
      root_session_id uuid primary key,
      thread_id text not null,
      created_at timestamptz not null default now(),
      deleted_at timestamptz
    )`.execute(db)
  await sql`create unique index threads_live_thread_idx on turnlog_langgraph.threads (thread_id) where deleted_at is null`.execute(db)
  // every turnlog session of a thread: the root and the forks taken when a past checkpoint was continued
  await sql`
    create table turnlog_langgraph.sessions (
      session_id uuid primary key,
      root_session_id uuid not null references turnlog_langgraph.threads (root_session_id),
      forked_from uuid,
      created_at timestamptz not null default now()
    )`.execute(db)
  await sql`create index sessions_root_idx on turnlog_langgraph.sessions (root_session_id)`.execute(db)
  await sql`
    create table turnlog_langgraph.checkpoints (
      thread_id text not null,
      checkpoint_ns text not null default '',
      checkpoint_id text not null,
      parent_checkpoint_id text,
      checkpoint jsonb not null,
      metadata jsonb not null default '{}',
      session_id uuid,
      session_version bigint,
      primary key (thread_id, checkpoint_ns, checkpoint_id)
    )`.execute(db)
  await sql`
    create table turnlog_langgraph.blobs (
      thread_id text not null,
      checkpoint_ns text not null default '',
      channel text not null,
      version text not null,
      type text not null,
      blob bytea,
      primary key (thread_id, checkpoint_ns, channel, version)
    )`.execute(db)
  await sql`
    create table turnlog_langgraph.writes (
      thread_id text not null,
      checkpoint_ns text not null default '',
      checkpoint_id text not null,
      task_id text not null,
      idx integer not null,
      channel text not null,
      type text,
      blob bytea not null,
      primary key (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
    )`.execute(db)
}
