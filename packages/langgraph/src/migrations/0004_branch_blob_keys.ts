import { sql, type Kysely } from 'kysely'

/**
 * Channel values of branches. Channel versions are LangGraph's integers, so two branches of a thread
 * (a fork by `updateState` on an old checkpoint, a replay) can put the same version of a channel with
 * different values; a blob row is keyed by the version, so the second value was dropped and its
 * checkpoint read the first branch's. Now a value that differs from the one already stored under its
 * version is stored under a key of its own (the version, `#`, the SHA-256 of its type and bytes), and
 * the checkpoint row names it: `blob_keys`, `{ channel: key }`, null when every channel is stored
 * under its plain version (every row written before, and every checkpoint of a thread without such
 * branches). A checkpoint that leaves a channel as it was keeps its parent's key for it. The view over
 * the rows reads each blob under the checkpoint's key, and still gives the channel version as the
 * blob's `version` (what the reader looks the value up by).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table turnlog_langgraph.checkpoints add column blob_keys json`.execute(db)
  await sql`
    create or replace view turnlog_langgraph.checkpoint_rows as
    select c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
           c.session_id::text as session_id, c.session_version,
           (select s.version from turnlog.sessions s where s.session_id = c.session_id) as head_version,
           (select json_agg(json_build_object('channel', b.channel, 'version', cv.version, 'type', b.type, 'blob', encode(b.blob, 'base64')))
              from json_each_text(c.checkpoint -> 'channel_versions') as cv(channel, version)
              join turnlog_langgraph.blobs b
                on b.thread_id = c.thread_id and b.checkpoint_ns = c.checkpoint_ns and b.channel = cv.channel
               and b.version = coalesce(c.blob_keys ->> cv.channel, cv.version)
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
}
