-- Inserts events of sessions that exist and the caller may act on (TLS01 otherwise, as for an unknown
-- session), in argument order, and returns how many. Each argument is one column, its values joined by
-- U+001E, an empty value being null (JSON.stringify never writes a raw U+001E, and ids, hex digits,
-- numbers and timestamps hold none): splitting one text is cheaper than json_array_elements (which
-- validates the whole array and then parses it again) or a text[] literal. Per event: session, seq,
-- event id, type, message id, content hash (hex), payload and data (JSON texts), recorded_at,
-- payload_digest (hex; only for a caller that may insert that column: a scrubbed event) and
-- the expected chain link (hex). The link stored is the one computed here (chain_link) from the previous
-- row's expected link (same session, seq - 1) or the stored predecessor (chain_predecessor, with its
-- checks); a difference raises TLC02 (detail: a
-- JSON object with sessionId, seq, suppliedHash, computedHash) before the statement ends, so nothing
-- of the call is written. By induction every stored link is computed from the stored predecessor.
create function turnlog.import_events(p_sessions text, p_seqs text, p_event_ids text, p_types text, p_message_ids text,
  p_content_hashes text, p_payloads text, p_data text, p_recorded_at text, p_digests text, p_hashes text)
returns bigint language plpgsql security definer set search_path = pg_catalog, pg_temp set jit = off as $fn$
declare
  v_count bigint;
begin
  perform turnlog.accessible_session_tenant(s.id)
     from (select distinct x::uuid as id from unnest(string_to_array(p_sessions, E'\x1e')) as x) s;
  if p_digests ~ '[^\x1e]'
     and not pg_catalog.has_column_privilege(turnlog.caller_role(), 'turnlog.events', 'payload_digest', 'INSERT') then
    raise exception 'permission denied to insert events.payload_digest (redaction only)' using errcode = '42501';
  end if;
  -- subqueries, not CTEs: a CTE holding a volatile call is materialized (a copy of every payload)
  insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at, payload_digest, hash)
  select c.session_id, c.seq, c.event_id, c.type, c.message_id, c.content_hash, c.payload, c.data, c.recorded_at, c.payload_digest,
         case when c.link = c.hash then c.link else turnlog.import_link_mismatch(c.session_id, c.seq, c.hash, c.link) end
    from (
      select l.*,
             turnlog.chain_link(l.prev, l.session_id, l.seq, l.event_id, l.type, l.message_id, l.content_hash, l.data, l.payload,
                                l.payload_digest) as link
        from (
          select i.*,
                 case when lag(i.session_id) over w = i.session_id and lag(i.seq) over w = i.seq - 1 then lag(i.hash) over w
                      else turnlog.chain_predecessor(i.session_id, i.seq, pg_current_xact_id()) end as prev
            from (
              select t.session_id::uuid as session_id, t.seq::bigint as seq, t.event_id::uuid as event_id, t.type,
                     t.message_id::uuid as message_id, decode(t.content_hash, 'hex') as content_hash,
                     t.payload::json as payload, t.data::json as data, t.recorded_at::timestamptz as recorded_at,
                     decode(t.digest, 'hex') as payload_digest, decode(t.hash, 'hex') as hash, t.ord
                from rows from (unnest(string_to_array(p_sessions, E'\x1e', '')), unnest(string_to_array(p_seqs, E'\x1e', '')),
                                unnest(string_to_array(p_event_ids, E'\x1e', '')), unnest(string_to_array(p_types, E'\x1e', '')),
                                unnest(string_to_array(p_message_ids, E'\x1e', '')), unnest(string_to_array(p_content_hashes, E'\x1e', '')),
                                unnest(string_to_array(p_payloads, E'\x1e', '')), unnest(string_to_array(p_data, E'\x1e', '')),
                                unnest(string_to_array(p_recorded_at, E'\x1e', '')), unnest(string_to_array(p_digests, E'\x1e', '')),
                                unnest(string_to_array(p_hashes, E'\x1e', '')))
                     with ordinality as t(session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at, digest, hash, ord)
            ) i
          window w as (order by i.ord)
        ) l
    ) c
   order by c.ord;
  get diagnostics v_count = row_count;
  return v_count;
end
$fn$;
