import { sql, type Kysely } from 'kysely'

/**
 * The messages channel's place is named by the checkpoint row itself instead of a marker row in
 * `turnlog_langgraph.blobs` (type `turnlog`, no bytes; rows written before keep working): the
 * channel (`messages_channel`) and its version (`messages_version`) whose value is the session at
 * `session_version`. And getTuple's read in one statement: `checkpoint_tuple` returns the checkpoint
 * row as `checkpoint_rows` gives it with what its messages need, the live list when its version is the
 * session's head, else the session's events up to the latest version it or one of its referenced
 * pending writes names (folded by the caller).
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`alter table turnlog_langgraph.checkpoints add column messages_channel text, add column messages_version text`.execute(db)
  // one json value: { row: the checkpoint_rows row, messages_channel, messages_version, live, events };
  // live: the live rows (turnlog.load_session) when the checkpoint is at its session's head; events:
  // the session's events up to the version it needs (its own, or a later one a referenced write of the
  // same session names), in seq order, as StoredEvent objects. A plan PL/pgSQL caches; one snapshot.
  await sql`
    create function turnlog_langgraph.checkpoint_tuple(p_thread text, p_ns text, p_checkpoint_id text)
    returns json
    language plpgsql stable set jit = off as $fn$
    declare
      v_id text := p_checkpoint_id;
      v_row json;
      v_channel text;
      v_version text;
      v_session uuid;
      v_at bigint;
      v_head bigint;
      v_upto bigint;
      v_live json;
      v_events json;
    begin
      if v_id is null then
        select max(c.checkpoint_id) into v_id from turnlog_langgraph.checkpoints c where c.thread_id = p_thread and c.checkpoint_ns = p_ns;
      end if;
      select row_to_json(v), c.messages_channel, c.messages_version, c.session_id, c.session_version, v.head_version
        into v_row, v_channel, v_version, v_session, v_at, v_head
        from turnlog_langgraph.checkpoint_rows v
        join turnlog_langgraph.checkpoints c
          on c.thread_id = v.thread_id and c.checkpoint_ns = v.checkpoint_ns and c.checkpoint_id = v.checkpoint_id
       where v.thread_id = p_thread and v.checkpoint_ns = p_ns and v.checkpoint_id = v_id;
      if not found then
        return null;
      end if;
      if v_session is not null and v_at is not null and v_head is not null then
        if v_at = v_head then
          select coalesce(json_agg(json_build_object('id', l.message_id, 'position', l.position, 'data', l.data, 'payload', l.payload) order by l.position), '[]')
            into v_live
            from turnlog.load_session(v_session) l
           where l.message_id is not null;
        else
          -- a messages write of this checkpoint stored as a reference names the child's version
          select greatest(v_at, max(r.version))
            into v_upto
            from turnlog_langgraph.writes w
            cross join lateral (select case when w.type = 'turnlog' then convert_from(w.blob, 'UTF8')::json end as ref) k
            cross join lateral (select (k.ref ->> 'version')::bigint as version, coalesce(k.ref ->> 'session', v_session::text) as session) r
           where w.thread_id = p_thread and w.checkpoint_ns = p_ns and w.checkpoint_id = v_id
             and w.type = 'turnlog' and r.session = v_session::text;
          select coalesce(json_agg(json_build_object(
                   'sessionId', e.session_id, 'seq', e.seq, 'eventId', e.event_id, 'type', e.type, 'messageId', e.message_id,
                   'contentHash', encode(e.content_hash, 'hex'), 'payload', e.payload, 'data', e.data,
                   'recordedAt', e.recorded_at, 'hash', encode(e.hash, 'hex'), 'payloadDigest', encode(e.payload_digest, 'hex'))
                   order by e.seq), '[]')
            into v_events
            from turnlog.events e
           where e.session_id = v_session and e.seq <= least(coalesce(v_upto, v_at), v_head);
        end if;
      end if;
      return json_build_object('row', v_row, 'messages_channel', v_channel, 'messages_version', v_version,
                               'live', v_live, 'events', v_events);
    end
    $fn$`.execute(db)
}
