import { sql, type Kysely } from 'kysely'

/**
 * 0004: the batch rebuild that `PostgresStore.rebuild` runs once per batch of sessions (see
 * docs/performance.md). `turnlog.rebuild_read` returns what the TypeScript fold needs (no payloads) and
 * the projection, in one snapshot. `turnlog.rebuild_sessions`, the batch form of `rebuild_session`,
 * leaves exactly the rows replaying each log through `turnlog.project_event` gives; a session's leading
 * run of plain appends is computed in one statement (as the statement-level projection trigger inserts
 * them), and rows already equal to the result are not rewritten. Released migrations are never edited;
 * later changes get new files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(SQL).execute(db)
}

/** Not reversible: the store's rebuild calls these functions. */
export async function down(): Promise<void> {
  throw new Error('0004_create_batch_rebuild cannot be reverted')
}

const SQL = String.raw`
-- Recomputes the projections of p_sessions from their logs. Per session, the events before its first
-- event other than message_appended or session_forked (project_event does nothing for a fork marker)
-- are plain appends, whose rows project_event would insert one by one with position = event_seq = seq.
-- - A session whose whole log is such a run: those rows are computed in one statement and the stored
--   rows are made equal to them: rows that already are stay untouched (no write, no dead tuple), the
--   rest are updated, deleted or inserted.
-- - Any other session: its rows are deleted, the leading run is inserted in one statement, and every
--   later event goes through project_event in seq order.
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
end
$fn$;

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

-- What rebuild compares, for a batch of sessions, in one statement (one snapshot): per session that
-- exists and the caller may see (row level security applies: not SECURITY DEFINER), its events' [seq,
-- type, message_id, data] in seq order and its projection rows' [message_id, event_seq, partial] in
-- position order, as JSON arrays; never payloads.
create function turnlog.rebuild_read(p_sessions uuid[])
returns table (session_id uuid, events json, live json)
language sql stable set search_path = pg_catalog, pg_temp set jit = off set max_parallel_workers_per_gather = 0 as $fn$
  select s.session_id,
         (select json_agg(json_build_array(e.seq, e.type, e.message_id, e.data) order by e.seq)
            from turnlog.events e where e.session_id = s.session_id),
         (select json_agg(json_build_array(l.message_id, l.event_seq, l.partial) order by l.position)
            from turnlog.live_messages l where l.session_id = s.session_id)
    from turnlog.sessions s
   where s.session_id = any (p_sessions)
   order by s.session_id
$fn$;

-- 'set jit = off' and no parallel workers on both: with a stale estimate of events per session (a freshly
-- loaded table), a batch's estimated cost passes jit_above_cost, and compiling took ~100 ms for ~10 ms of
-- index lookups; a parallel plan would start workers for the same few lookups.
alter function turnlog.rebuild_sessions_unchecked(uuid[]) owner to turnlog_owner;
alter function turnlog.rebuild_sessions(uuid[]) owner to turnlog_owner;
alter function turnlog.rebuild_read(uuid[]) owner to turnlog_owner;
revoke all on function turnlog.rebuild_sessions_unchecked(uuid[]) from public;
revoke all on function turnlog.rebuild_sessions(uuid[]) from public;
revoke all on function turnlog.rebuild_read(uuid[]) from public;
grant execute on function turnlog.rebuild_sessions(uuid[]) to turnlog_writer;
grant execute on function turnlog.rebuild_read(uuid[]) to turnlog_writer, turnlog_reader;
`
