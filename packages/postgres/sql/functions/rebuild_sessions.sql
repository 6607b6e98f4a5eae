-- The entry point: runs as the owner after the caller's tenant check on every session (TLS01 for one it
-- may not see, exactly like an unknown session), and returns each session's rebuilt rows as one JSON
-- array of [message_id, event_seq, partial] in position order, so the caller can compare them with its
-- fold in the same transaction.
create function turnlog.rebuild_sessions(p_sessions uuid[])
returns table (session_id uuid, live json)
language plpgsql security definer set search_path = pg_catalog, pg_temp set jit = off set max_parallel_workers_per_gather = 0 as $fn$
declare
  v_checked int;
begin
  select count(turnlog.accessible_session_tenant(u.id)) into v_checked from unnest(p_sessions) as u(id);
  perform turnlog.rebuild_sessions_unchecked(p_sessions);
  return query
    select b.id, (select json_agg(json_build_array(l.message_id, l.event_seq, l.partial) order by l.position)
                    from turnlog.live_messages l where l.session_id = b.id)
      from (select distinct u.id from unnest(p_sessions) as u(id)) b
     order by b.id;
end
$fn$;
