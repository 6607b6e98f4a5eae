-- Recomputes the projections of p_sessions from their logs. Per session, the events before its first
-- event other than message_appended or session_forked (project_event does nothing for a fork marker)
-- are plain appends, whose rows project_event would insert one by one with position = event_seq = seq.
-- - A session whose whole log is such a run: those rows are computed in one statement and the stored
--   rows are made equal to them: rows that already are stay untouched (no write, no dead tuple), the
--   rest are updated, deleted or inserted.
-- - Any other session: its rows are deleted, the leading run is inserted in one statement, and every
--   later event goes through project_event in seq order.
-- Then each session's appends_only (0007) is set from its log where it differs (no write otherwise).
-- The caller holds the sessions' row locks.
create function turnlog.rebuild_sessions_unchecked(p_sessions uuid[]) returns void language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_plain uuid[];
  v_ids uuid[];
  v_stops bigint[];
  ev turnlog.events;
begin
  with b as (
    select s.id, (select min(o.seq) from turnlog.events o
                   where o.session_id = s.id and o.type not in ('message_appended', 'session_forked')) as stop
      from (select distinct u.id from unnest(p_sessions) as u(id)) s
  )
  select array_agg(b.id order by b.id) filter (where b.stop is null),
         array_agg(b.id order by b.id) filter (where b.stop is not null),
         array_agg(b.stop order by b.id) filter (where b.stop is not null)
    into v_plain, v_ids, v_stops
    from b;

  if v_plain is not null then
    -- 'offset 0' keeps each lateral an index range scan of one session (not a hash join over the table);
    -- diff holds only the rows that differ: usually none, and then nothing is written
    with want as materialized (
      select p.id as session_id, x.message_id, x.seq as position, x.seq as event_seq,
             (x.data->>'status') is not distinct from 'partial' as partial
        from unnest(v_plain) as p(id)
       cross join lateral (
         select e.seq, e.message_id, e.data, e.type from turnlog.events e where e.session_id = p.id offset 0) x
       where x.type = 'message_appended' and (x.data->>'deferred') is null
    ), have as materialized (
      select l.session_id, l.message_id, l.position, l.event_seq, l.partial
        from turnlog.live_messages l where l.session_id = any (v_plain)
    ), diff as materialized (
      select w.session_id as w_session, w.message_id as w_message, w.position, w.event_seq, w.partial,
             h.session_id as h_session, h.message_id as h_message
        from want w full join have h on h.session_id = w.session_id and h.message_id = w.message_id
       where w.session_id is null or h.session_id is null
          or (h.position, h.event_seq, h.partial) is distinct from (w.position, w.event_seq, w.partial)
    ), gone as (
      delete from turnlog.live_messages l using diff d
       where d.w_session is null and l.session_id = d.h_session and l.message_id = d.h_message
    ), changed as (
      update turnlog.live_messages l set position = d.position, event_seq = d.event_seq, partial = d.partial
        from diff d
       where d.w_session is not null and l.session_id = d.h_session and l.message_id = d.h_message
    )
    insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
    select d.w_session, d.w_message, d.position, d.event_seq, d.partial from diff d where d.h_session is null;
  end if;

  if v_ids is not null then
    delete from turnlog.live_messages l where l.session_id = any (v_ids);
    insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
    select b.id, x.message_id, x.seq, x.seq, (x.data->>'status') is not distinct from 'partial'
      from unnest(v_ids, v_stops) as b(id, stop)
     cross join lateral (
       select e.seq, e.message_id, e.data, e.type from turnlog.events e
        where e.session_id = b.id and e.seq < b.stop offset 0) x
     where x.type = 'message_appended' and (x.data->>'deferred') is null;
    for ev in
      select x.* from unnest(v_ids, v_stops) as b(id, stop)
       cross join lateral (select e.* from turnlog.events e where e.session_id = b.id and e.seq >= b.stop offset 0) x
       order by x.session_id, x.seq
    loop
      perform turnlog.project_event(ev);
    end loop;
  end if;

  update turnlog.sessions s set appends_only = f.flag
    from (select u.id, not exists (select 1 from turnlog.events e
                                    where e.session_id = u.id
                                      and (e.type <> 'message_appended' or (e.data->>'deferred') is not null)) as flag
            from (select distinct x.id from unnest(p_sessions) as x(id)) u) f
   where s.session_id = f.id and s.appends_only is distinct from f.flag;
end
$fn$;
