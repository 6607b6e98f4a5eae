-- The inline projection: applies one event to turnlog.live_messages. The trigger below calls it for
-- every inserted event; rebuild calls it while replaying a session's log.
create function turnlog.project_event(e turnlog.events) returns void language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
declare
  first_pos bigint;
  last_pos bigint;
  n_summary int;
begin
  if e.type = 'message_appended' then
    if (e.data->>'deferred') is null then
      insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
      values (e.session_id, e.message_id, e.seq, e.seq, (e.data->>'status') is not distinct from 'partial');
    end if;
  elsif e.type = 'message_revised' then
    update turnlog.live_messages
       set event_seq = e.seq, partial = (e.data->>'status') is not distinct from 'partial'
     where session_id = e.session_id and message_id = e.message_id;
  elsif e.type = 'message_finalized' then
    update turnlog.live_messages set partial = false
     where session_id = e.session_id and message_id = e.message_id;
  elsif e.type = 'messages_retracted' then
    delete from turnlog.live_messages
     where session_id = e.session_id
       and message_id in (select value::uuid from json_array_elements_text(e.data->'ids'));
  elsif e.type = 'messages_compacted' then
    select min(l.position) into first_pos from turnlog.live_messages l
     where l.session_id = e.session_id
       and l.message_id in (select (c->>'id')::uuid from json_array_elements(e.data->'covered') c);
    delete from turnlog.live_messages
     where session_id = e.session_id
       and message_id in (select (c->>'id')::uuid from json_array_elements(e.data->'covered') c);
    n_summary := json_array_length(e.data->'summary');
    if first_pos is null then
      select coalesce(max(l.position), 0) + 1 into first_pos from turnlog.live_messages l where l.session_id = e.session_id;
    end if;
    if n_summary > 1 then
      update turnlog.live_messages set position = position + (n_summary - 1)
       where session_id = e.session_id and position > first_pos;
    end if;
    -- each summary id once (its first place), and only a pending one: appended deferred before this
    -- event, not live, and named by no compaction since that append (which placed it); any other id is
    -- skipped, as the spec does
    insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
    select e.session_id, p.id, first_pos + p.ord - 1, a.seq,
           -- a summary finalized while it was pending (an import may write that) is placed final; a
           -- finalize before its append named a message not yet there, which the spec skips
           (a.data->>'status') is not distinct from 'partial'
             and not exists (select 1 from turnlog.events f
                              where f.message_id = a.message_id and f.session_id = e.session_id
                                and f.type = 'message_finalized' and f.seq > a.seq and f.seq < e.seq)
      from (select s.id::uuid as id, min(s.ord) as ord
              from json_array_elements_text(e.data->'summary') with ordinality as s(id, ord) group by 1) p
      join turnlog.events a on a.session_id = e.session_id and a.message_id = p.id and a.type = 'message_appended'
                           and a.seq < e.seq and (a.data->>'deferred') is not null
     where not exists (select 1 from turnlog.live_messages l where l.session_id = e.session_id and l.message_id = p.id)
       and not exists (select 1 from turnlog.events c
                        where c.session_id = e.session_id and c.type = 'messages_compacted' and c.seq > a.seq and c.seq < e.seq
                          and exists (select 1 from json_array_elements_text(c.data->'summary') x where x.value::uuid = p.id));
    -- an append takes its seq as position, so every position must stay at most this event's seq: a log
    -- written around the store (an import) may place more summaries than it covers after a live append
    -- that followed them, and the next append would then share a position with the last summary. Such a
    -- compaction numbers the live list 1..n again (n live messages came from at most seq - 1 appends).
    -- Store calls never get here: their summaries are appended just before the compaction.
    select max(l.position) into last_pos from turnlog.live_messages l where l.session_id = e.session_id;
    if last_pos > e.seq then
      update turnlog.live_messages l set position = r.n
        from (select x.message_id, row_number() over (order by x.position) as n
                from turnlog.live_messages x where x.session_id = e.session_id) r
       where l.session_id = e.session_id and l.message_id = r.message_id and l.position <> r.n;
    end if;
  end if;
end
$fn$;
