-- What rebuild compares, for a batch of sessions, in one statement (one snapshot): per session that
-- exists and the caller may see (row level security applies: not SECURITY DEFINER), its events' [seq,
-- type, message_id, data] in seq order and its projection rows' [message_id, event_seq, partial] in
-- position order, as JSON arrays; never payloads; and the session's appends_only flag (0007), which
-- the caller checks against the log like the projection rows.
create function turnlog.rebuild_read(p_sessions uuid[])
returns table (session_id uuid, events json, live json, appends_only boolean)
language sql stable set search_path = pg_catalog, pg_temp set jit = off set max_parallel_workers_per_gather = 0 as $fn$
  select s.session_id,
         (select json_agg(json_build_array(e.seq, e.type, e.message_id, e.data) order by e.seq)
            from turnlog.events e where e.session_id = s.session_id),
         (select json_agg(json_build_array(l.message_id, l.event_seq, l.partial) order by l.position)
            from turnlog.live_messages l where l.session_id = s.session_id),
         s.appends_only
    from turnlog.sessions s
   where s.session_id = any (p_sessions)
   order by s.session_id
$fn$;
