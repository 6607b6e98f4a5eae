-- The session's version and live messages in one statement (one snapshot), with the plan cached by
-- PL/pgSQL (planning the join per call costs more than running it). Rows: the session's own row
-- (version set, message_id null), then one row per live message (version null) with its position,
-- in no particular order: the caller orders them by position. A session whose log is appends only
-- (sessions.appends_only, 0007) is read from its events alone, position = seq, in seq order (one
-- primary-key range read, like a plain table's); any other from the projection joined with the events
-- holding each message's current content (in seq order, which is position order unless a compaction
-- or a revision moved something). TLS01 when the session does not exist or the caller may not see it.
-- Security invoker: row level security applies to all three tables. No JIT and no parallel plan, as
-- for load_live: with stale statistics the planner chose a parallel plan for a 100-row read (7-9 ms
-- instead of 0.5 ms). No pinned search_path (as load_live): an invoker function runs with the caller's
-- own rights and every table is qualified, and each SET is a save and restore per call (≈ 10 µs
-- measured for search_path).
create function turnlog.load_session(p_session uuid)
returns table (version bigint, message_id uuid, "position" bigint, partial boolean, content_hash text, data json, payload json)
language plpgsql stable set jit = off set max_parallel_workers_per_gather = 0 as $fn$
begin
  return query
    select s.version, null::uuid, null::bigint, null::boolean, null::text, null::json, null::json
      from turnlog.sessions s
     where s.session_id = p_session
    union all
    select null::bigint, x.message_id, x.position, x.partial, x.content_hash, x.data, x.payload
      from turnlog.sessions s
     cross join lateral (
       select e.message_id, e.seq as position, (e.data->>'status') is not distinct from 'partial' as partial,
              encode(e.content_hash, 'hex') as content_hash, e.data, e.payload
         from turnlog.events e
        where s.appends_only and e.session_id = s.session_id
       union all
       select l.message_id, l.position, l.partial, encode(e.content_hash, 'hex'), e.data, e.payload
         from turnlog.live_messages l
         join turnlog.events e on e.session_id = l.session_id and e.seq = l.event_seq
        where not s.appends_only and l.session_id = s.session_id and e.session_id = s.session_id) x
     where s.session_id = p_session;
  if not found then
    raise exception 'session % not found', p_session using errcode = 'TLS01';
  end if;
end
$fn$;
