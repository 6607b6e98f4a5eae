/**
 * The statement creating the view over the checkpoint rows as migrations 0001 to 0003 left it (before
 * 0004 read the blobs under the row's `blob_keys`): `jsonb_each_text` over the jsonb columns of 0001 and
 * 0002, `json_each_text` after 0003. For tests that turn a database back into what an older saver left.
 */
export function checkpointRowsViewBefore0004(eachText: 'json_each_text' | 'jsonb_each_text'): string {
  return `
  create view turnlog_langgraph.checkpoint_rows as
  select c.thread_id, c.checkpoint_ns, c.checkpoint_id, c.parent_checkpoint_id, c.checkpoint, c.metadata,
         c.session_id::text as session_id, c.session_version,
         (select s.version from turnlog.sessions s where s.session_id = c.session_id) as head_version,
         (select json_agg(json_build_object('channel', b.channel, 'version', b.version, 'type', b.type, 'blob', encode(b.blob, 'base64')))
            from ${eachText}(c.checkpoint -> 'channel_versions') as cv(channel, version)
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
    from turnlog_langgraph.checkpoints c`
}
