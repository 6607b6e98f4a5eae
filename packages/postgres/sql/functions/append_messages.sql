-- The common append in one round trip. Arrays are JSON texts zipped by position; payloads are only
-- stored, never inspected (they may hold \u0000 or lone surrogates, which JSON operators refuse).
-- Duplicates are found without taking the session lock, so a retry storm writes nothing and waits for
-- nothing. "A message id belongs to one session" is checked by the insert's claim (events_claim_ids).
-- Runs as the owner (SECURITY DEFINER) so that its INSERT carries the chain links, computed here with
-- chain_link from chain_predecessor once per call (the row trigger skips rows that carry a link when the
-- owner inserts them); the rule of the row policies is applied here instead, decided once per call (the
-- rule of caller_may_access): the caller sees, classifies against and writes only sessions of the
-- tenant it is bound to. Without bitmap scans, with generic plans only (see append_batches). Raises TLS01 (no session, or one the
-- caller may not act on), TLV01 (version conflict; detail is the actual version; checked before a
-- conflict is reported), TLM01 (conflict; detail is a JSON list), and 23505 on message_ids_pkey when
-- another writer stored one of the new ids after the classification (call again: they are duplicates
-- or conflicts now). A message may come without its content (payload and data JSON null): the store sends
-- a message it saw stored in this session so, and it must be a duplicate; when it is new here, TLP01
-- (the store's knowledge is wrong, e.g. after a restore: it sends the batch again in full).
create function turnlog.append_messages(p_session uuid, p_expected bigint, p_ids json, p_hashes json,
  p_event_ids json, p_payloads json, p_data json)
returns table (version bigint, appended uuid[], duplicates uuid[])
language plpgsql security definer set search_path = pg_catalog, pg_temp set jit = off set enable_bitmapscan = off
set plan_cache_mode = force_generic_plan as $fn$
declare
  v_role text := turnlog.caller_role();
  v_all boolean;
  v_tenant text;
  v_version bigint;
  v_conflicts json;
  v_new uuid[];
  v_dup uuid[];
  v_count int;
  v_event uuid[];
  v_mid uuid[];
  v_content bytea[];
  v_payload json[];
  v_data json[];
  v_link bytea[] := '{}';
  v_prev bytea;
begin
  -- the rule of the row policies (caller_may_access): every session, or those of the bound tenant
  v_all := turnlog.caller_sees_all(v_role);
  if not v_all then
    v_tenant := turnlog.bound_tenant(v_role::name);
  end if;
  -- events of p_session count whatever its tenant: every outcome below reads or locks p_session
  -- under the tenant rule first, and raises TLS01 when the caller may not act on it. Materialized: a
  -- plain CTE column keeps events_message_id_idx an index condition.
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
           and (e.session_id = p_session or v_all
                or (select s.tenant_id from turnlog.sessions s where s.session_id = e.session_id) is not distinct from v_tenant)
      ) k
  )
  select json_agg(json_build_object(
           'messageId', c.id,
           'reason', case when c.own_exists then 'content_mismatch' else 'foreign_session' end,
           'storedHash', encode(c.stored_hash, 'hex'),
           'incomingHash', encode(c.hash, 'hex'),
           'otherSessionId', case when c.own_exists then null else c.other_session end))
           filter (where (c.own_exists and not c.own_match) or (not c.own_exists and c.other_session is not null)),
         array_agg(c.id) filter (where not c.own_exists and c.other_session is null),
         array_agg(c.id) filter (where c.own_match)
    into v_conflicts, v_new, v_dup
    from (select * from classified c order by c.ord) c; -- one sort for every aggregate: they read in this order

  v_count := coalesce(array_length(v_new, 1), 0);
  if v_conflicts is not null or v_count = 0 then
    select s.version into v_version from turnlog.sessions s
     where s.session_id = p_session and (v_all or s.tenant_id is not distinct from v_tenant);
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
   where s.session_id = p_session and (v_all or s.tenant_id is not distinct from v_tenant)
  returning s.version - v_count into v_version;
  if not found then
    raise exception 'session % not found', p_session using errcode = 'TLS01';
  end if;
  if p_expected is not null and p_expected <> v_version then
    raise exception 'version conflict' using errcode = 'TLV01', detail = v_version::text;
  end if;

  -- the new rows in order, their links folded from the predecessor of the first (the checks of
  -- chain_predecessor: TLC01, 40001), and one INSERT carrying them
  select array_agg(t.event_id::uuid), array_agg(t.id::uuid), array_agg(decode(t.hash, 'hex')),
         array_agg(case when json_typeof(t.payload) <> 'null' then t.payload end),
         array_agg(case when json_typeof(t.data) <> 'null' then t.data end)
    into v_event, v_mid, v_content, v_payload, v_data
    from (select * from rows from (json_array_elements_text(p_ids), json_array_elements_text(p_hashes),
                                   json_array_elements_text(p_event_ids), json_array_elements(p_payloads), json_array_elements(p_data))
                        with ordinality as t(id, hash, event_id, payload, data, ord)
           where t.id::uuid = any (v_new) order by t.ord) t;
  v_prev := turnlog.chain_predecessor(p_session, v_version + 1, pg_catalog.pg_current_xact_id());
  for i in 1 .. v_count loop
    if v_payload[i] is null or v_data[i] is null then
      raise exception 'message % is new in session % but came without its content', v_mid[i], p_session
        using errcode = 'TLP01', detail = v_mid[i]::text;
    end if;
    v_prev := turnlog.chain_link(v_prev, p_session, v_version + i, v_event[i], 'message_appended', v_mid[i], v_content[i],
                                 v_data[i], v_payload[i], null);
    v_link[i] := v_prev;
  end loop;
  insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, hash)
  select p_session, v_version + u.ord, u.event_id, 'message_appended', u.mid, u.content, u.payload, u.data, u.link
    from unnest(v_event, v_mid, v_content, v_payload, v_data, v_link) with ordinality as u(event_id, mid, content, payload, data, link, ord);

  return query select v_version + v_count, v_new, coalesce(v_dup, '{}'::uuid[]);
end
$fn$;
