-- Inserts the new messages of append_messages / append_batches with their chain links computed here,
-- in one statement, instead of by the events_link row trigger (which skips rows the owner inserts with
-- a link). Row k of (p_msgs, p_sessions, p_seqs) writes message p_msgs[k] of the JSON arrays (1-based,
-- zipped by position as for append_messages) as event p_seqs[k] of session p_sessions[k]. The tails of
-- the links (chain_link_tail) are computed set-based; the links are then folded in (session, seq)
-- order: from the previous row when it is the same session's seq - 1, else from the stored predecessor
-- (chain_predecessor: genesis, TLC01, 40001). SECURITY DEFINER (writers may not insert hash), so it
-- checks the caller may act on every session (TLS01 otherwise, as for an unknown session); it reads
-- nothing else past row level security. It is no more than the plain INSERT the writer may run: the
-- links are computed, never supplied, and the type is message_appended. The callers classify the
-- messages and take the session locks as the caller, under row level security, before calling it.
-- Generic plans only: its arguments are arrays whose sizes vary from call to call, and a custom plan
-- per call would cost more than the insert.
create function turnlog.insert_appended(p_msgs bigint[], p_sessions uuid[], p_seqs bigint[], p_ids json, p_hashes json,
  p_event_ids json, p_payloads json, p_data json) returns void
language plpgsql security definer set search_path = pg_catalog, pg_temp set plan_cache_mode = force_generic_plan as $fn$
declare
  v_session uuid[];
  v_seq bigint[];
  v_event uuid[];
  v_message uuid[];
  v_content bytea[];
  v_payload json[];
  v_data json[];
  v_link bytea[];
  v_prev bytea;
  v_tx xid8 := pg_current_xact_id();
  v_n int;
  v_tenant text;
begin
  -- the common case in one query: every session exists and is of the caller's bound tenant; any other
  -- is checked alone by accessible_session_tenant (the owner, superusers and BYPASSRLS roles act on every
  -- tenant). A scalar subquery: one primary-key probe per session, whatever the plan's row estimates.
  v_tenant := turnlog.bound_tenant(turnlog.caller_role()::name);
  perform turnlog.accessible_session_tenant(d.id)
     from (select distinct x as id from unnest(p_sessions) as x) d
    where (select true from turnlog.sessions s where s.session_id = d.id and s.tenant_id is not distinct from v_tenant) is null;
  select array_agg(r.session_id), array_agg(r.seq), array_agg(r.event_id), array_agg(r.message_id), array_agg(r.content_hash),
         array_agg(r.payload), array_agg(r.data),
         array_agg(turnlog.chain_link_tail(r.session_id, r.seq, r.event_id, 'message_appended', r.message_id, r.content_hash,
                                           r.data, r.payload, null))
    into v_session, v_seq, v_event, v_message, v_content, v_payload, v_data, v_link
    from (select w.session_id, w.seq, t.event_id::uuid as event_id, t.id::uuid as message_id,
                 decode(t.hash, 'hex') as content_hash, t.payload, t.data
            from rows from (json_array_elements_text(p_ids), json_array_elements_text(p_hashes),
                            json_array_elements_text(p_event_ids), json_array_elements(p_payloads), json_array_elements(p_data))
                 with ordinality as t(id, hash, event_id, payload, data, ord)
            join unnest(p_msgs, p_sessions, p_seqs) as w(msg, session_id, seq) on w.msg = t.ord
           order by w.session_id, w.seq) r;
  v_n := coalesce(array_length(v_session, 1), 0);
  for i in 1 .. v_n loop
    if i = 1 or v_session[i] <> v_session[i - 1] or v_seq[i] <> v_seq[i - 1] + 1 then
      v_prev := turnlog.chain_predecessor(v_session[i], v_seq[i], v_tx);
    end if;
    v_prev := sha256(v_prev || v_link[i]);
    v_link[i] := v_prev;
  end loop;
  insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, hash)
  select r.session_id, r.seq, r.event_id, 'message_appended', r.message_id, r.content_hash, r.payload, r.data, r.hash
    from unnest(v_session, v_seq, v_event, v_message, v_content, v_payload, v_data, v_link)
         as r(session_id, seq, event_id, message_id, content_hash, payload, data, hash);
end
$fn$;
