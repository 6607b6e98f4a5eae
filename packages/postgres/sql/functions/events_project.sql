-- Statement-level: plain appends go in with one INSERT … SELECT; every other event is applied in seq
-- order through project_event. Equivalent to applying the events one by one (positions are seqs, and a
-- compaction's shift keeps later appends after everything earlier).
create function turnlog.events_project() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  e turnlog.events;
begin
  insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
  select n.session_id, n.message_id, n.seq, n.seq, (n.data->>'status') is not distinct from 'partial'
    from new_events n
   where n.type = 'message_appended' and (n.data->>'deferred') is null;
  for e in select * from new_events n where n.type <> 'message_appended' order by n.session_id, n.seq loop
    perform turnlog.project_event(e);
  end loop;
  return null;
end
$fn$;
