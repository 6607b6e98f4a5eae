import { sql, type Kysely } from 'kysely'

/**
 * A checkpoint row's `checkpoint` and `metadata` as `json` (the text as the saver wrote it) instead of
 * `jsonb` (its binary form, which spends a length and an offset on every key and value: ≈ 200 B for a
 * typical checkpoint, 65 for its metadata, against ≈ 125 and 45 as text). The saver only reads the
 * row back whole; the metadata filter of `list` casts to `jsonb` where it compares. The view over the
 * rows is recreated for the type (`json_each_text`), and `checkpoint_row` with it (unused since 0002).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`drop function turnlog_langgraph.checkpoint_row(text, text, text)`.execute(db)
  await sql`drop view turnlog_langgraph.checkpoint_rows`.execute(db)
  await sql`
    alter table turnlog_langgraph.checkpoints
      alter column checkpoint type json using checkpoint::json,
      alter column metadata drop default,
      alter column metadata type json using metadata::json,
      alter column metadata set default '{}'::json`.execute(db)
  await sql`
    create view turnlog_langgraph.checkpoint_rows as
    select c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
           c.session_id::text as session_id, c.session_version,
           (select s.version from turnlog.sessions s where s.session_id = c.session_id) as head_version,
           (select json_agg(json_build_object('channel', b.channel, 'version', b.version, 'type', b.type, 'blob', encode(b.blob, 'base64')))
              from json_each_text(c.checkpoint -> 'channel_versions') as cv(channel, version)
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
}
