-- Recomputes one session's inline projection from its log (same code path as the trigger), without a
-- tenant check: only rebuild_session (which checks) calls it. Sets the session's appends_only (0007)
-- from its log where it differs.
create function turnlog.rebuild_session_unchecked(p_session uuid) returns void language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
declare
  e turnlog.events;
begin
  delete from turnlog.live_messages where session_id = p_session;
  for e in select * from turnlog.events where session_id = p_session order by seq loop
    perform turnlog.project_event(e);
  end loop;
  update turnlog.sessions s
     set appends_only = not s.appends_only
   where s.session_id = p_session
     and s.appends_only = exists (select 1 from turnlog.events x
                                   where x.session_id = p_session
                                     and (x.type <> 'message_appended' or (x.data->>'deferred') is not null));
end
$fn$;
