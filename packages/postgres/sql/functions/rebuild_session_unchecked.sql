-- Recomputes one session's inline projection from its log (same code path as the trigger), without a
-- tenant check: only rebuild_session (which checks) calls it.
create function turnlog.rebuild_session_unchecked(p_session uuid) returns void language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
declare
  e turnlog.events;
begin
  delete from turnlog.live_messages where session_id = p_session;
  for e in select * from turnlog.events where session_id = p_session order by seq loop
    perform turnlog.project_event(e);
  end loop;
end
$fn$;
