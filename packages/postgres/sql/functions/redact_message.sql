-- The one privileged path that scrubs content (GDPR erasure). Scrubs every content event of message
-- p_message in every session of p_session's tenant that holds it (turnlog.lock_message_sessions: the
-- session, its forks, their parents, forks made concurrently included), and the payloads of its recorded
-- conflicts in the tenant. Each scrubbed payload is replaced by its placeholder (p_targets: [{sessionId,
-- seq}] and p_placeholders, the placeholders in the same order, made by the client, checked here) and its
-- original text's SHA-256 goes to payload_digest; id, seq, content hash and chain link stay. Appends one
-- message_redacted event to every session scrubbed, whose data lists one scrub record per scrubbed event,
-- {"seq","contentHash","payloadDigest","placeholderDigest"} (chained: a scrub no redaction event records,
-- or a rewritten placeholder, does not verify). p_conflicts: [{sessionId, conflictId}] with
-- p_conflict_placeholders; p_event_ids: {sessionId: eventId}; p_reason: a JSON string or null. Raises
-- TLS01 (no such session for the caller), TLU01 (the message is not in the session), 40001 (targets
-- changed since the client read them: retry), 22023 (a placeholder is not one of the message's format, or
-- does not follow the payload it replaces: turnlog.placeholder_follows).
create function turnlog.redact_message(p_session uuid, p_message uuid, p_targets json, p_placeholders json,
  p_conflicts json, p_conflict_placeholders json, p_event_ids json, p_reason json)
returns table (session_id uuid, version bigint, scrubbed int)
language plpgsql security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  v_tenant text := turnlog.accessible_session_tenant(p_session);
  v_scope uuid[];
  v_reason text;
  v_sessions uuid[];
  v_counts int[];
  v_format text;
begin
  if p_reason is not null and json_typeof(p_reason) <> 'string' then
    raise exception 'reason must be a JSON string' using errcode = '22023';
  end if;
  v_reason := case when p_reason is null then '' else '"reason":' || p_reason::text || ',' end;

  v_scope := turnlog.lock_message_sessions(p_session, p_message);
  if not exists (select 1 from turnlog.events e where e.session_id = p_session and e.message_id = p_message) then
    raise exception 'message % is not in session %', p_message, p_session using errcode = 'TLU01';
  end if;
  select array_agg(s.session_id order by s.session_id) into v_scope from turnlog.sessions s
   where s.session_id = any (v_scope)
     and exists (select 1 from turnlog.events e where e.session_id = s.session_id and e.message_id = p_message);

  -- the client's targets must be exactly the unscrubbed content events of the message in scope
  -- (a fork copy of a placeholder, data.redacted, was never content)
  if exists (
       (select e.session_id, e.seq from turnlog.events e
         where e.session_id = any (v_scope) and e.message_id = p_message and e.content_hash is not null
           and e.payload_digest is null and (e.data->>'redacted') is null
        except select (t->>'sessionId')::uuid, (t->>'seq')::bigint from json_array_elements(p_targets) t)
       union all
       (select (t->>'sessionId')::uuid, (t->>'seq')::bigint from json_array_elements(p_targets) t
        except select e.session_id, e.seq from turnlog.events e
         where e.session_id = any (v_scope) and e.message_id = p_message and e.content_hash is not null
           and e.payload_digest is null and (e.data->>'redacted') is null)) then
    raise exception 'the events of message % changed since they were read; retry', p_message using errcode = '40001';
  end if;
  if exists (
       (select c.session_id, c.conflict_id from turnlog.conflicts c
         where c.message_id = p_message
           and c.session_id in (select s.session_id from turnlog.sessions s where s.tenant_id is not distinct from v_tenant)
        except select (x->>'sessionId')::uuid, (x->>'conflictId')::uuid from json_array_elements(p_conflicts) x)
       union all
       (select (x->>'sessionId')::uuid, (x->>'conflictId')::uuid from json_array_elements(p_conflicts) x
        except select c.session_id, c.conflict_id from turnlog.conflicts c
         where c.message_id = p_message
           and c.session_id in (select s.session_id from turnlog.sessions s where s.tenant_id is not distinct from v_tenant))) then
    raise exception 'the conflicts of message % changed since they were read; retry', p_message using errcode = '40001';
  end if;
  -- the message's format (every copy has the first one): conflict evidence is checked as that format
  select e.data->>'format' into v_format from turnlog.events e
   where e.session_id = any (v_scope) and e.message_id = p_message and e.content_hash is not null limit 1;
  if json_array_length(p_placeholders) <> json_array_length(p_targets)
     or json_array_length(p_conflict_placeholders) <> json_array_length(p_conflicts)
     or exists (select 1 from rows from (json_array_elements(p_targets), json_array_elements(p_placeholders)) as t(k, ph)
                  join turnlog.events e on e.session_id = (t.k->>'sessionId')::uuid and e.seq = (t.k->>'seq')::bigint
                 where not coalesce(turnlog.is_redaction_placeholder(turnlog.json_operable(t.ph), e.data->>'format')
                                    and turnlog.placeholder_follows(turnlog.json_operable(t.ph), turnlog.json_operable(e.payload),
                                                                    coalesce(e.data->>'format', 'openai-chat')), false))
     or exists (select 1 from rows from (json_array_elements(p_conflicts), json_array_elements(p_conflict_placeholders)) as x(k, ph)
                  join turnlog.conflicts c on c.session_id = (x.k->>'sessionId')::uuid and c.conflict_id = (x.k->>'conflictId')::uuid
                 where not coalesce(turnlog.is_redaction_placeholder(turnlog.json_operable(x.ph), v_format)
                                    and turnlog.placeholder_follows(turnlog.json_operable(x.ph), turnlog.json_operable(c.incoming_payload),
                                                                    coalesce(v_format, 'openai-chat')), false)) then
    raise exception 'a redaction placeholder must be { role, content: ''[redacted]'' } plus pairing ids, or a structural placeholder, and follow the payload it replaces (content removed, nothing added)' using errcode = '22023';
  end if;

  update turnlog.conflicts c set incoming_payload = x.ph
    from rows from (json_array_elements(p_conflicts), json_array_elements(p_conflict_placeholders)) as x(k, ph)
   where c.session_id = (x.k->>'sessionId')::uuid and c.conflict_id = (x.k->>'conflictId')::uuid;

  -- the right-hand side sees the old row: the digest is of the text being replaced
  update turnlog.events e
     set payload = t.ph, payload_digest = sha256(convert_to(e.payload::text, 'UTF8'))
    from rows from (json_array_elements(p_targets), json_array_elements(p_placeholders)) as t(k, ph)
   where e.session_id = (t.k->>'sessionId')::uuid and e.seq = (t.k->>'seq')::bigint;

  -- one message_redacted event per session scrubbed; its data text is what JSON.stringify makes of it
  with scrubbed as (
    select e.session_id, count(*)::int as n,
           string_agg('{"seq":' || e.seq::text || ',"contentHash":"' || encode(e.content_hash, 'hex')
                      || '","payloadDigest":"' || encode(e.payload_digest, 'hex')
                      || '","placeholderDigest":"' || encode(turnlog.placeholder_digest(e.payload), 'hex') || '"}', ',' order by e.seq) as list
      from json_array_elements(p_targets) t
      join turnlog.events e on e.session_id = (t->>'sessionId')::uuid and e.seq = (t->>'seq')::bigint
     group by e.session_id
  ), bumped as (
    update turnlog.sessions s set version = s.version + 1, updated_at = now()
      from scrubbed x where s.session_id = x.session_id
    returning s.session_id, s.version, x.n, x.list
  ), written as (
    insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
    select b.session_id, b.version, (p_event_ids->>(b.session_id::text))::uuid, 'message_redacted', p_message, null, null,
           ('{' || v_reason || '"scrubbed":[' || b.list || '],"origin":"' || p_session::text || '"}')::json
      from bumped b
    returning 1
  )
  select array_agg(b.session_id), array_agg(b.n) into v_sessions, v_counts from bumped b;

  return query
    select s.session_id, s.version, coalesce(x.n, 0)
      from turnlog.sessions s
      left join unnest(coalesce(v_sessions, '{}'), coalesce(v_counts, '{}')) as x(session_id, n) on x.session_id = s.session_id
     where s.session_id = any (v_scope)
     order by s.session_id;
end
$fn$;
