import { sql, type Kysely } from 'kysely'

/**
 * 0001: the event log, the inline projection, the conflict evidence table, the hash-chain trigger and
 * the one-round-trip append function. Released migrations are never edited; later changes get new files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(SQL).execute(db)
}

/** Not reversible: turnlog never drops history. */
export async function down(): Promise<void> {
  throw new Error('0001_create_event_log cannot be reverted')
}

const SQL = String.raw`create schema if not exists turnlog;

create table turnlog.sessions (
  session_id uuid primary key,
  tenant_id text,
  version bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  metadata json,
  parent_session_id uuid,
  parent_version bigint,
  fork_at uuid
);
create index sessions_tenant_idx on turnlog.sessions (tenant_id, session_id);

create table turnlog.events (
  session_id uuid not null,
  seq bigint not null,
  global_position bigint generated always as identity,
  tx_id xid8 not null default pg_current_xact_id(),
  event_id uuid not null,
  type text not null,
  message_id uuid,
  content_hash bytea,
  payload json,
  data json not null,
  recorded_at timestamptz not null default now(),
  hash bytea not null,
  primary key (session_id, seq)
);
create index events_message_id_idx on turnlog.events (message_id, session_id) where message_id is not null;

create table turnlog.live_messages (
  session_id uuid not null,
  message_id uuid not null,
  position bigint not null,
  event_seq bigint not null,
  partial boolean not null default false,
  primary key (session_id, message_id)
);
create index live_messages_position_idx on turnlog.live_messages (session_id, position);

create table turnlog.conflicts (
  session_id uuid not null,
  conflict_id uuid not null,
  message_id uuid not null,
  reason text not null,
  stored_hash bytea,
  incoming_hash bytea not null,
  other_session_id uuid,
  incoming_payload json not null,
  detected_at timestamptz not null default now(),
  primary key (session_id, conflict_id)
);

create function turnlog.chain_hash(prev bytea, p_session uuid, p_seq bigint, p_event uuid, p_type text,
  p_message uuid, p_content bytea, p_data json, p_payload json) returns bytea
-- stable, not immutable: convert_to is stable, and only then can the planner inline the body into the
-- trigger's expression (an immutable function with a stable body is called, not inlined: ~40 µs a row)
language sql stable parallel safe as $fn$
  select sha256(
    prev
    || convert_to(p_session::text || E'\n' || p_seq::text || E'\n' || p_event::text || E'\n' || p_type || E'\n'
       || coalesce(p_message::text, '') || E'\n' || coalesce(encode(p_content, 'hex'), '') || E'\n', 'UTF8')
    || sha256(convert_to(p_data::text, 'UTF8'))
    || sha256(convert_to(coalesce(p_payload::text, ''), 'UTF8')))
$fn$;

create function turnlog.events_link() returns trigger language plpgsql as $fn$
declare
  prev bytea;
begin
  if new.seq = 1 then
    prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
  else
    select e.hash into prev from turnlog.events e where e.session_id = new.session_id and e.seq = new.seq - 1;
    if prev is null then
      raise exception 'turnlog: event % of session % has no predecessor', new.seq, new.session_id
        using errcode = 'TLC01';
    end if;
  end if;
  new.hash := turnlog.chain_hash(prev, new.session_id, new.seq, new.event_id, new.type, new.message_id,
    new.content_hash, new.data, new.payload);
  return new;
end
$fn$;

create trigger events_link before insert on turnlog.events
  for each row execute function turnlog.events_link();

-- The inline projection: applies one event to turnlog.live_messages. The trigger below calls it for
-- every inserted event; rebuild calls it while replaying a session's log.
create function turnlog.project_event(e turnlog.events) returns void language plpgsql as $fn$
declare
  first_pos bigint;
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
    insert into turnlog.live_messages (session_id, message_id, position, event_seq, partial)
    select e.session_id, s.id::uuid, first_pos + s.ord - 1, a.seq, (a.data->>'status') is not distinct from 'partial'
      from json_array_elements_text(e.data->'summary') with ordinality as s(id, ord)
      join turnlog.events a on a.session_id = e.session_id and a.message_id = s.id::uuid and a.type = 'message_appended';
  end if;
end
$fn$;

-- Statement-level: plain appends go in with one INSERT … SELECT; every other event is applied in seq
-- order through project_event. Equivalent to applying the events one by one (positions are seqs, and a
-- compaction's shift keeps later appends after everything earlier).
create function turnlog.events_project() returns trigger language plpgsql as $fn$
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

create trigger events_project after insert on turnlog.events
  referencing new table as new_events
  for each statement execute function turnlog.events_project();

-- Recomputes one session's inline projection from its log (same code path as the trigger).
create function turnlog.rebuild_session(p_session uuid) returns void language plpgsql as $fn$
declare
  e turnlog.events;
begin
  delete from turnlog.live_messages where session_id = p_session;
  for e in select * from turnlog.events where session_id = p_session order by seq loop
    perform turnlog.project_event(e);
  end loop;
end
$fn$;

-- The live list in one round trip with a cached plan (a three-table join is planned anew for every
-- unnamed client statement: measured 0.3-3 ms, more than executing it). STABLE: both reads see one
-- snapshot. Security invoker: row level security (0003) applies.
create function turnlog.load_live(p_session uuid)
returns table (version bigint, message_id uuid, partial boolean, payload json, data json, content_hash text)
-- no JIT and no parallel workers: before the first ANALYZE the planner guesses large tables and picked a
-- parallel plan for a 100-row read (measured 7-9 ms instead of 0.5 ms)
language plpgsql stable set jit = off set max_parallel_workers_per_gather = 0 as $fn$
declare
  v_version bigint;
begin
  select s.version into v_version from turnlog.sessions s where s.session_id = p_session;
  if not found then
    raise exception 'session % not found', p_session using errcode = 'TLS01';
  end if;
  return query
    select v_version, l.message_id, l.partial, e.payload, e.data, encode(e.content_hash, 'hex')
      from turnlog.live_messages l
      join turnlog.events e on e.session_id = l.session_id and e.seq = l.event_seq
     where l.session_id = p_session and e.session_id = p_session
     order by l.position;
  if not found then
    return query select v_version, null::uuid, null::boolean, null::json, null::json, null::text;
  end if;
end
$fn$;

-- The common append in one round trip. Arrays are JSON texts zipped by position; payloads are only
-- stored, never inspected (they may hold \u0000 or lone surrogates, which JSON operators refuse).
-- Duplicates are found without taking the session lock, so a retry storm writes nothing and waits for
-- nothing. Raises TLS01 (no session), TLM01 (conflict; detail is a JSON list), TLV01 (version conflict;
-- detail is the actual version), TLR01 (another writer stored some of these ids, in this session or
-- another, between the check and the locks: call again, they are duplicates or conflicts now).
create function turnlog.append_messages(p_session uuid, p_expected bigint, p_ids json, p_hashes json,
  p_event_ids json, p_payloads json, p_data json)
returns table (version bigint, appended uuid[], duplicates uuid[])
language plpgsql set jit = off as $fn$
declare
  v_version bigint;
  v_conflicts json;
  v_new uuid[];
  v_dup uuid[];
  v_count int;
  v_key int;
begin
  -- materialized: under row level security (0003) a join qual holding a cast of a column counts as
  -- leaky and cannot be an index condition; a plain CTE column keeps events_message_id_idx usable
  with incoming as materialized (
    select t.id::uuid as id, decode(t.hash, 'hex') as hash, t.ord
      from rows from (json_array_elements_text(p_ids), json_array_elements_text(p_hashes)) with ordinality as t(id, hash, ord)
  ), classified as (
    select i.id, i.hash, i.ord, k.own_match, k.own_exists, k.other_session, k.stored_hash
      from incoming i
      cross join lateral (
        select coalesce(bool_or(e.session_id = p_session and e.content_hash = i.hash), false) as own_match,
               coalesce(bool_or(e.session_id = p_session), false) as own_exists,
               (array_agg(e.session_id) filter (where e.session_id <> p_session))[1] as other_session,
               (array_agg(e.content_hash order by (e.session_id = p_session) desc, e.seq desc))[1] as stored_hash
          from turnlog.events e
         where e.message_id = i.id and e.content_hash is not null
      ) k
  )
  select json_agg(json_build_object(
           'messageId', c.id,
           'reason', case when c.own_exists then 'content_mismatch' else 'foreign_session' end,
           'storedHash', encode(c.stored_hash, 'hex'),
           'incomingHash', encode(c.hash, 'hex'),
           'otherSessionId', case when c.own_exists then null else c.other_session end) order by c.ord)
           filter (where (c.own_exists and not c.own_match) or (not c.own_exists and c.other_session is not null)),
         array_agg(c.id order by c.ord) filter (where not c.own_exists and c.other_session is null),
         array_agg(c.id order by c.ord) filter (where c.own_match)
    into v_conflicts, v_new, v_dup
    from classified c;

  if v_conflicts is not null then
    raise exception 'message conflict' using errcode = 'TLM01', detail = v_conflicts::text;
  end if;

  v_count := coalesce(array_length(v_new, 1), 0);
  if v_count = 0 then
    select s.version into v_version from turnlog.sessions s where s.session_id = p_session;
    if not found then
      raise exception 'session % not found', p_session using errcode = 'TLS01';
    end if;
    return query select v_version, '{}'::uuid[], coalesce(v_dup, '{}'::uuid[]);
    return;
  end if;

  -- take the session lock and the seq range in one statement
  update turnlog.sessions s set version = s.version + v_count, updated_at = now()
   where s.session_id = p_session
  returning s.version - v_count into v_version;
  if not found then
    raise exception 'session % not found', p_session using errcode = 'TLS01';
  end if;
  if p_expected is not null and p_expected <> v_version then
    raise exception 'version conflict' using errcode = 'TLV01', detail = v_version::text;
  end if;
  -- a message id belongs to one session: serialise appends of the same new id across sessions (the
  -- session lock only covers one session), in id order so two batches never wait on each other
  for v_key in select distinct hashtext(n.id::text) from unnest(v_new) as n(id) order by 1 loop
    perform pg_advisory_xact_lock(1953263977, v_key);
  end loop;
  -- one index probe per id (a lateral aggregate): plpgsql caches a generic plan, and both
  -- "message_id = any (v_new)" and a join on unnest(v_new) get a sequential scan of the whole log as
  -- their generic plan until the table is analyzed (measured: append cost grew with the table)
  if exists (select 1 from unnest(v_new) as n(id)
              cross join lateral (select count(*) as c from turnlog.events e where e.message_id = n.id) k
             where k.c > 0) then
    raise exception 'a concurrent append stored some of these messages' using errcode = 'TLR01';
  end if;

  insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
  select p_session, v_version + row_number() over (order by t.ord), t.event_id::uuid, 'message_appended',
         t.id::uuid, decode(t.hash, 'hex'), t.payload, t.data
    from rows from (json_array_elements_text(p_ids), json_array_elements_text(p_hashes),
                    json_array_elements_text(p_event_ids), json_array_elements(p_payloads), json_array_elements(p_data))
         with ordinality as t(id, hash, event_id, payload, data, ord)
   where t.id::uuid = any (v_new)
   order by t.ord;

  return query select v_version + v_count, v_new, coalesce(v_dup, '{}'::uuid[]);
end
$fn$;
`
