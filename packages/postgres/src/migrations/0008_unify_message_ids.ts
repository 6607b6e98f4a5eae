import { sql, type Kysely } from 'kysely'

/**
 * 0008: one arbiter for "a message id belongs to one session" (per tenant).
 *
 * - `turnlog.message_ids` holds one row per message id and tenant: the session that introduced it.
 *   Its primary key is the check: whatever path writes an event that introduces an id (an append, a
 *   group commit, a compaction's summary, an import), the statement trigger `events_claim_ids` inserts
 *   the id's row in the same statement, so a second session's insert of the same id waits for the first
 *   transaction and then fails with a unique violation (`23505`, constraint `message_ids_pkey`), or
 *   succeeds if the first rolled back. Exact under any concurrency, whatever the path, with nothing that
 *   grows with the batch (no lock per id). A fork's inherited copies (`data.inheritedFrom`) introduce
 *   nothing: a child shares its parent's ids.
 * - The key is per tenant (`tenant_scope`: `''` for sessions without a tenant, `'='` followed by the
 *   tenant id otherwise; a primary key column cannot be null): ids are scoped per tenant
 *   (docs/security.md), and one tenant cannot claim ids another derives from external ids.
 * - `append_messages` and `append_batches` lose their advisory lock per new id (a batch of 16,000 new
 *   ids exhausted the lock table: `53200 out of shared memory`) and the re-check after it: the insert
 *   is the check. The store re-runs a call that lost the race, which then classifies the ids as
 *   duplicates or conflicts.
 * - `append_messages` checks the session and `expectedVersion` before it reports a conflict: a stale
 *   write gets `TLV01` (`VERSION_CONFLICT`) whatever else is wrong with it, as every other write.
 * - Rows for the ids already stored are filled in (the first session that introduced each id keeps it).
 *
 * Writers have no privilege on the table: the trigger runs as the owner. Released migrations are never
 * edited; later changes get new files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(SQL).execute(db)
}

/** Not reversible: without the arbiter, concurrent writers could put one id in several sessions. */
export async function down(): Promise<void> {
  throw new Error('0008_unify_message_ids cannot be reverted')
}

const SQL = String.raw`
create table turnlog.message_ids (
  message_id uuid not null,
  tenant_scope text not null,
  session_id uuid not null,
  primary key (message_id, tenant_scope)
);
alter table turnlog.message_ids owner to turnlog_owner;
revoke all on turnlog.message_ids from public;
-- nobody but the owner reads or writes it; the policy is there should a grant ever be added
alter table turnlog.message_ids enable row level security;
create policy message_ids_tenant on turnlog.message_ids
  using ((select true from turnlog.sessions s where s.session_id = message_ids.session_id));

-- the ids already stored: the first session (in log order) that introduced each one keeps it
insert into turnlog.message_ids (message_id, tenant_scope, session_id)
select distinct on (e.message_id, coalesce('=' || s.tenant_id, '')) e.message_id, coalesce('=' || s.tenant_id, ''), e.session_id
  from turnlog.events e
  join turnlog.sessions s on s.session_id = e.session_id
 where e.type = 'message_appended' and (e.data->>'inheritedFrom') is null
 order by e.message_id, coalesce('=' || s.tenant_id, ''), e.global_position;

-- The arbiter: claims every id an inserted event introduces (a message_appended that is not a fork's
-- copy), in key order so that two statements claiming overlapping ids never wait on each other in a
-- cycle. Runs as the owner (writers have no privilege on message_ids; the session's tenant is read
-- past row level security, which already let the caller insert the event). Fires before the
-- projection trigger (same timing, name order), so a statement that loses does no projection work.
create function turnlog.events_claim_ids() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
begin
  insert into turnlog.message_ids (message_id, tenant_scope, session_id)
  select n.message_id, coalesce('=' || s.tenant_id, ''), n.session_id
    from new_events n
    join turnlog.sessions s on s.session_id = n.session_id
   where n.type = 'message_appended' and (n.data->>'inheritedFrom') is null
   order by 1, 2;
  return null;
end
$fn$;
alter function turnlog.events_claim_ids() owner to turnlog_owner;
revoke all on function turnlog.events_claim_ids() from public;
create trigger events_claim_ids after insert on turnlog.events
  referencing new table as new_events
  for each statement execute function turnlog.events_claim_ids();

-- 0001's append without the lock per id and the re-check: the insert's claim (events_claim_ids) is
-- the check. Raises TLS01 (no session), TLV01 (version conflict; detail is the actual version; checked
-- before a conflict is reported), TLM01 (conflict; detail is a JSON list), and 23505 on
-- message_ids_pkey when another writer stored one of the new ids after the classification (call
-- again: they are duplicates or conflicts now).
create or replace function turnlog.append_messages(p_session uuid, p_expected bigint, p_ids json, p_hashes json,
  p_event_ids json, p_payloads json, p_data json)
returns table (version bigint, appended uuid[], duplicates uuid[])
language plpgsql set jit = off set enable_bitmapscan = off as $fn$
declare
  v_version bigint;
  v_conflicts json;
  v_new uuid[];
  v_dup uuid[];
  v_count int;
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

  v_count := coalesce(array_length(v_new, 1), 0);
  if v_conflicts is not null or v_count = 0 then
    select s.version into v_version from turnlog.sessions s where s.session_id = p_session;
    if not found then
      raise exception 'session % not found', p_session using errcode = 'TLS01';
    end if;
    if v_conflicts is not null then
      -- nothing is written either way; a stale writer learns that first (as for every other write)
      if p_expected is not null and p_expected <> v_version then
        raise exception 'version conflict' using errcode = 'TLV01', detail = v_version::text;
      end if;
      raise exception 'message conflict' using errcode = 'TLM01', detail = v_conflicts::text;
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

-- 0005's group append without the lock per id and the re-check (as append_messages above). The whole
-- call fails with 23505 on message_ids_pkey when another writer stored one of its new ids after the
-- classification; the caller then runs each batch alone.
create or replace function turnlog.append_batches(p_sessions json, p_expected json, p_counts json, p_ids json,
  p_hashes json, p_event_ids json, p_payloads json, p_data json)
returns table (batch int, version bigint, appended uuid[], duplicates uuid[])
language plpgsql set jit = off set enable_bitmapscan = off as $fn$
declare
  v_b int[];
  v_session uuid[];
  v_expected bigint[];
  v_current bigint[];
  v_msg bigint[];
  v_id uuid[];
  v_new boolean[];
  v_s_b int[] := '{}';
  v_s_session uuid[] := '{}';
  v_s_base bigint[] := '{}';
  v_n int;
  v_j int := 1;
  v_first int;
  v_count int;
  v_base bigint;
begin
  -- classification, exactly as in 0005
  with input as materialized (
    select t.ord::int as b, t.sid::uuid as session_id, t.exp::bigint as expected, t.cnt::int as cnt,
           (sum(t.cnt::int) over (order by t.ord) - t.cnt::int) as first_msg
      from rows from (json_array_elements_text(p_sessions), json_array_elements_text(p_expected),
                      json_array_elements_text(p_counts)) with ordinality as t(sid, exp, cnt, ord)
  ), batches as materialized (
    select i.*, (select s.version from turnlog.sessions s where s.session_id = i.session_id) as current_version
      from input i
  ), incoming as materialized (
    select b.b, b.session_id, b.expected, b.current_version, m.ord as msg, m.id::uuid as id, decode(m.hash, 'hex') as hash
      from rows from (json_array_elements_text(p_ids), json_array_elements_text(p_hashes)) with ordinality as m(id, hash, ord)
      join batches b on m.ord > b.first_msg and m.ord <= b.first_msg + b.cnt
  ), classified as (
    select i.b, i.session_id, i.expected, i.current_version, i.msg, i.id, not k.own_exists as is_new,
           (k.own_exists and not k.own_match) or (not k.own_exists and k.other_exists)
             or (not k.own_exists and i.b > min(i.b) over (partition by i.id)) as bad
      from incoming i
      cross join lateral (
        select coalesce(bool_or(e.session_id = i.session_id and e.content_hash = i.hash), false) as own_match,
               coalesce(bool_or(e.session_id = i.session_id), false) as own_exists,
               coalesce(bool_or(e.session_id <> i.session_id), false) as other_exists
          from turnlog.events e
         where e.message_id = i.id and e.content_hash is not null
      ) k
  )
  select array_agg(c.b order by c.session_id, c.b, c.msg), array_agg(c.session_id order by c.session_id, c.b, c.msg),
         array_agg(c.expected order by c.session_id, c.b, c.msg), array_agg(c.current_version order by c.session_id, c.b, c.msg),
         array_agg(c.msg order by c.session_id, c.b, c.msg),
         array_agg(c.id order by c.session_id, c.b, c.msg), array_agg(c.is_new order by c.session_id, c.b, c.msg)
    into v_b, v_session, v_expected, v_current, v_msg, v_id, v_new
    from (select c.*, bool_or(c.bad) over (partition by c.b) as batch_bad from classified c) c
   where not c.batch_bad and c.current_version is not null;

  v_n := coalesce(array_length(v_b, 1), 0);
  while v_j <= v_n loop
    v_first := v_j;
    v_count := 0;
    appended := '{}';
    duplicates := '{}';
    while v_j <= v_n and v_b[v_j] = v_b[v_first] loop
      if v_new[v_j] then
        v_count := v_count + 1;
        appended := appended || v_id[v_j];
      else
        duplicates := duplicates || v_id[v_j];
      end if;
      v_j := v_j + 1;
    end loop;
    if v_count = 0 then
      v_base := v_current[v_first];
    else
      update turnlog.sessions s set version = s.version + v_count, updated_at = now()
       where s.session_id = v_session[v_first] and (v_expected[v_first] is null or s.version = v_expected[v_first])
      returning s.version - v_count into v_base;
    end if;
    if v_count = 0 or found then
      if v_count > 0 then
        v_s_b := v_s_b || v_b[v_first];
        v_s_session := v_s_session || v_session[v_first];
        v_s_base := v_s_base || v_base;
      end if;
      batch := v_b[v_first];
      version := v_base + v_count;
      return next; -- rows reach the caller only if the whole call succeeds
    end if;
  end loop;

  if cardinality(v_s_b) > 0 then
    insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
    select w.session_id, w.seq, t.event_id::uuid, 'message_appended', t.id::uuid, decode(t.hash, 'hex'), t.payload, t.data
      from rows from (json_array_elements_text(p_ids), json_array_elements_text(p_hashes),
                      json_array_elements_text(p_event_ids), json_array_elements(p_payloads), json_array_elements(p_data))
           with ordinality as t(id, hash, event_id, payload, data, ord)
      join (select m.msg, s.session_id, s.base + row_number() over (partition by m.b order by m.msg) as seq
              from unnest(v_b, v_msg, v_new) as m(b, msg, is_new)
              join unnest(v_s_b, v_s_session, v_s_base) as s(b, session_id, base) on s.b = m.b
             where m.is_new) w on w.msg = t.ord
     order by w.session_id, w.seq;
  end if;
end
$fn$;
`
