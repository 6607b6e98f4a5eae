-- Statement-level: a statement's plain appends that come before its session's first other event go in
-- with one INSERT … SELECT; every later event (appends included) is applied in seq order through
-- project_event. Equivalent to applying the events one by one: an append after a compaction in the
-- same statement must not be placed before the compaction looks for the end of the live list (a
-- compaction covering nothing puts its summary at the end as it stands then). The rows go in key order
-- (session, seq: the order of positions, and of UUIDv7 message ids): once the planner has statistics it
-- may emit them reversed (a hash join), and descending inserts leave the B-tree leaves half full. A
-- statement of appends only (every append function's) takes a plain INSERT and nothing else (measured:
-- 0.13 M instructions less per append_messages call than the join and the empty loop).
-- It also keeps sessions.appends_only (0007): a statement that brings a session any event other than a
-- message_appended, or a deferred append, clears it (load then reads the projection); the common
-- statement pays no more than before: the one count below replaces the exists test it made, and the
-- insert's row count tells whether any append was deferred.
create function turnlog.events_project() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  e turnlog.events;
  v_all bigint;
  v_other bigint;
  v_live bigint;
begin
  select count(*), count(*) filter (where o.type <> 'message_appended') into v_all, v_other from new_events o;
  -- the common statement holds appends only: one plain INSERT, no look for other events
  if v_other = 0 then
    insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
    select n.session_id, n.message_id, n.seq, n.seq, (n.data->>'status') is not distinct from 'partial'
      from new_events n
     where (n.data->>'deferred') is null
     order by n.session_id, n.seq;
    get diagnostics v_live = row_count;
    if v_live < v_all then
      update turnlog.sessions s set appends_only = false
       where s.appends_only
         and s.session_id in (select n.session_id from new_events n where (n.data->>'deferred') is not null);
    end if;
    return null;
  end if;
  update turnlog.sessions s set appends_only = false
   where s.appends_only
     and s.session_id in (select n.session_id from new_events n
                           where n.type <> 'message_appended' or (n.data->>'deferred') is not null);
  insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
  select n.session_id, n.message_id, n.seq, n.seq, (n.data->>'status') is not distinct from 'partial'
    from new_events n
    left join (select o.session_id, min(o.seq) as seq from new_events o
                where o.type <> 'message_appended' group by o.session_id) f on f.session_id = n.session_id
   where n.type = 'message_appended' and (n.data->>'deferred') is null and (f.seq is null or n.seq < f.seq)
   order by n.session_id, n.seq;
  for e in select n.* from new_events n
             left join (select o.session_id, min(o.seq) as seq from new_events o
                         where o.type <> 'message_appended' group by o.session_id) f on f.session_id = n.session_id
            where n.type <> 'message_appended' or (f.seq is not null and n.seq > f.seq)
            order by n.session_id, n.seq loop
    perform turnlog.project_event(e);
  end loop;
  return null;
end
$fn$;
