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
  // a checkpoint row with what a tuple needs besides its messages: its channel blobs, its pending
  // writes, its parent's pending sends (a checkpoint older than v4, '__pregel_tasks' is LangGraph's
  // TASKS channel) and its session's head version (bytes in base64)
  await sql`
    create view turnlog_langgraph.checkpoint_rows as
    select c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
           c.session_id::text as session_id, c.session_version,
           (select s.version from turnlog.sessions s where s.session_id = c.session_id) as head_version,
           (select json_agg(json_build_object('channel', b.channel, 'version', b.version, 'type', b.type, 'blob', encode(b.blob, 'base64')))
              from jsonb_each_text(c.checkpoint -> 'channel_versions') as cv(channel, version)
              join turnlog_langgraph.blobs b
                on b.thread_id = c.thread_id and b.checkpoint_ns = c.checkpoint_ns and b.channel = cv.channel and b.version = cv.version
           ) as blobs,
           (select json_agg(json_build_object('task_id', w.task_id, 'idx', w.idx, 'channel', w.channel, 'type', w.type,
                                              'blob', encode(w.blob, 'base64')) order by w.task_id, w.idx)
              from turnlog_langgraph.writes w
             where w.thread_id = c.thread_id and w.checkpoint_ns = c.checkpoint_ns and w.checkpoint_id = c.checkpoint_id
           ) as writes,
           (select json_agg(json_build_object('task_id', w.task_id, 'idx', w.idx, 'channel', w.channel, 'type', w.type,
                                              'blob', encode(w.blob, 'base64')) order by w.task_id, w.idx)
              from turnlog_langgraph.writes w
             where coalesce((c.checkpoint ->> 'v')::int, 4) < 4 and c.parent_checkpoint_id is not null
               and w.thread_id = c.thread_id and w.checkpoint_ns = c.checkpoint_ns and w.checkpoint_id = c.parent_checkpoint_id
               and w.channel = '__pregel_tasks'
           ) as sends
      from turnlog_langgraph.checkpoints c`.execute(db)
  // getTuple's read: one checkpoint row (the latest of the thread and namespace when p_checkpoint_id is
  // null) with a plan PL/pgSQL caches (planning the view's subqueries per call costs more than running them)
  await sql`
    create function turnlog_langgraph.checkpoint_row(p_thread text, p_ns text, p_checkpoint_id text)
    returns setof turnlog_langgraph.checkpoint_rows
    language plpgsql stable as $fn$
    begin
      if p_checkpoint_id is null then
        return query select * from turnlog_langgraph.checkpoint_rows c
                      where c.thread_id = p_thread and c.checkpoint_ns = p_ns order by c.checkpoint_id desc limit 1;
      else
        return query select * from turnlog_langgraph.checkpoint_rows c
                      where c.thread_id = p_thread and c.checkpoint_ns = p_ns and c.checkpoint_id = p_checkpoint_id;
      end if;
    end
    $fn$`.execute(db)
}
