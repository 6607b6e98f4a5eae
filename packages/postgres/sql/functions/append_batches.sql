-- Several sessions' batches in one statement (the store's group commit: one transaction, one commit).
-- Batch b (1-based) is session p_sessions[b] with the expected version p_expected[b] (null: any) and
-- the next p_counts[b] messages of the flat message arrays (zipped by position, as for append_messages).
-- Returns one row per batch it settled: written (appended non-empty) or made only of duplicates. A batch
-- it leaves out wrote nothing: a conflict, a message id new in an earlier batch of the same call, a
-- missing session or another version than expected; the caller runs it alone through append_messages,
-- which reports its error. The whole call fails with 23505 on message_ids_pkey when another writer
-- stored one of its new ids after the classification; the caller then runs each batch alone.
-- No bitmap scans: every read here is a probe for one id or one key, and until the tables are analyzed
-- the cached generic plan used a bitmap scan for them (measured: a group of 8 re-sent turns 0.6 ms ->
-- 0.4 ms with plain index scans). Generic plans only: the tenant rule's variables (v_all, v_tenant) made
-- the plan cache keep custom plans, so the classification was planned again at every call (a re-sent
-- group of 8 turns 0.6 -> 1.07 ms; docs/performance.md). Runs as the owner (SECURITY DEFINER), like append_messages: the rule
-- of the row policies is applied here (a batch of a session the caller may not act on is left out, and
-- its classification counts only events of sessions the caller may see), and the INSERT carries the
-- chain links, folded per session from chain_predecessor at the session's first new row. A message that
-- came without its content (payload and data JSON null, as append_messages) and is new: TLP01.
create function turnlog.append_batches(p_sessions json, p_expected json, p_counts json, p_ids json,
  p_hashes json, p_event_ids json, p_payloads json, p_data json)
returns table (batch int, version bigint, appended uuid[], duplicates uuid[])
language plpgsql security definer set search_path = pg_catalog, pg_temp set jit = off set enable_bitmapscan = off
set plan_cache_mode = force_generic_plan as $fn$
declare
  v_role text := turnlog.caller_role();
  v_all boolean;
  v_tenant text;
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
  v_r_session uuid[];
  v_r_seq bigint[];
  v_r_event uuid[];
  v_r_mid uuid[];
  v_r_content bytea[];
  v_r_payload json[];
  v_r_data json[];
  v_link bytea[] := '{}';
  v_prev bytea;
begin
  -- the rule of the row policies (caller_may_access): every session, or those of the bound tenant
  v_all := turnlog.caller_sees_all(v_role);
  if not v_all then
    v_tenant := turnlog.bound_tenant(v_role::name);
  end if;
  -- classify every message without any lock (a retry storm writes nothing and waits for nothing). A
  -- batch is left out when one of its messages conflicts (another content under its id in the session,
  -- or the id is stored in another session) or is new and also in an earlier batch of this call.
  -- The incoming rows are materialized for the same reason as in append_messages (index conditions).
  -- A session the caller may not act on has no current version, so its batch is left out; events of a
  -- batch's own session count only then.
  with input as materialized (
    select t.ord::int as b, t.sid::uuid as session_id, t.exp::bigint as expected, t.cnt::int as cnt,
           (sum(t.cnt::int) over (order by t.ord) - t.cnt::int) as first_msg
      from rows from (json_array_elements_text(p_sessions), json_array_elements_text(p_expected),
                      json_array_elements_text(p_counts)) with ordinality as t(sid, exp, cnt, ord)
  ), batches as materialized (
    select i.*, (select s.version from turnlog.sessions s
                  where s.session_id = i.session_id and (v_all or s.tenant_id is not distinct from v_tenant)) as current_version
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
           and (e.session_id = i.session_id or v_all
                or (select s.tenant_id from turnlog.sessions s where s.session_id = e.session_id) is not distinct from v_tenant)
      ) k
  )
  select array_agg(c.b), array_agg(c.session_id), array_agg(c.expected), array_agg(c.current_version), array_agg(c.msg),
         array_agg(c.id), array_agg(c.is_new)
    into v_b, v_session, v_expected, v_current, v_msg, v_id, v_new
    from (select c.* from (select c.*, bool_or(c.bad) over (partition by c.b) as batch_bad from classified c) c
           where not c.batch_bad and c.current_version is not null
           order by c.session_id, c.b, c.msg) c; -- one sort for every aggregate: they read in this order

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
         and (v_all or s.tenant_id is not distinct from v_tenant)
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
    -- the new rows in (session, seq) order, their links folded per session from the predecessor of the
    -- session's first new row (the checks of chain_predecessor: TLC01, 40001), and one INSERT carrying them
    select array_agg(r.session_id), array_agg(r.seq), array_agg(r.event_id), array_agg(r.mid), array_agg(r.content),
           array_agg(r.payload), array_agg(r.data)
      into v_r_session, v_r_seq, v_r_event, v_r_mid, v_r_content, v_r_payload, v_r_data
      from (select w.session_id, w.seq, t.event_id::uuid as event_id, t.id::uuid as mid, decode(t.hash, 'hex') as content,
                   case when json_typeof(t.payload) <> 'null' then t.payload end as payload,
                   case when json_typeof(t.data) <> 'null' then t.data end as data
      from rows from (json_array_elements_text(p_ids), json_array_elements_text(p_hashes),
                      json_array_elements_text(p_event_ids), json_array_elements(p_payloads), json_array_elements(p_data))
           with ordinality as t(id, hash, event_id, payload, data, ord)
      join (select m.msg, s.session_id, s.base + row_number() over (partition by m.b order by m.msg) as seq
              from unnest(v_b, v_msg, v_new) as m(b, msg, is_new)
              join unnest(v_s_b, v_s_session, v_s_base) as s(b, session_id, base) on s.b = m.b
             where m.is_new) w on w.msg = t.ord
     order by w.session_id, w.seq) r; -- one sort for every aggregate: they read in this order
    for i in 1 .. cardinality(v_r_seq) loop
      if v_r_payload[i] is null or v_r_data[i] is null then
        raise exception 'message % is new in session % but came without its content', v_r_mid[i], v_r_session[i]
          using errcode = 'TLP01', detail = v_r_mid[i]::text;
      end if;
      if i = 1 or v_r_session[i] <> v_r_session[i - 1] then
        v_prev := turnlog.chain_predecessor(v_r_session[i], v_r_seq[i], pg_catalog.pg_current_xact_id());
      end if;
      v_prev := turnlog.chain_link(v_prev, v_r_session[i], v_r_seq[i], v_r_event[i], 'message_appended', v_r_mid[i],
                                   v_r_content[i], v_r_data[i], v_r_payload[i], null);
      v_link[i] := v_prev;
    end loop;
    insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, hash)
    select u.session_id, u.seq, u.event_id, 'message_appended', u.mid, u.content, u.payload, u.data, u.link
      from unnest(v_r_session, v_r_seq, v_r_event, v_r_mid, v_r_content, v_r_payload, v_r_data, v_link)
           as u(session_id, seq, event_id, mid, content, payload, data, link); -- in (session, seq) order, as the arrays
  end if;
end
$fn$;
