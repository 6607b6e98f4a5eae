-- The arbiter: claims every id an inserted event introduces (a message_appended that is not a fork's
-- copy), in key order so that two statements claiming overlapping ids never wait on each other in a
-- cycle. Runs as the owner (writers have no privilege on message_ids; the session's tenant is read
-- past row level security, which already let the caller insert the event). Fires before the
-- projection trigger (same timing, name order), so a statement that loses does no projection work.
--
-- Since 0006 it also checks the events the claim's key does not guard: a fork's copy (data.inheritedFrom)
-- and any append into a fork session. A copy must name the session's fork parent (a session that is no
-- fork holds no copies), and a session holds a message id once (no other message_appended of it, in
-- the log or the statement); otherwise TLA01 and nothing of the statement is written. An original
-- append elsewhere needs neither: the session's own claim refuses a second one (23505). The claiming
-- statement marks a statement holding such an event (the transaction-local setting turnlog.claim_check,
-- which this function clears again before it checks: a setting a statement sets outlives the function)
-- instead of checking row by row, so the common append (no copy, no fork) pays one test per row and
-- one read of the mark, and a fork checks its copies in one set-based statement.
create function turnlog.events_claim_ids() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  v_bad record;
begin
  insert into turnlog.message_ids (message_id, tenant_scope, session_id)
  select n.message_id, coalesce('=' || s.tenant_id, ''), n.session_id
    from new_events n
    join turnlog.sessions s on s.session_id = n.session_id
   where n.type = 'message_appended'
     and case when s.parent_session_id is null and (n.data->>'inheritedFrom') is null then true
              else set_config('turnlog.claim_check', 'on', true) = 'on' and (n.data->>'inheritedFrom') is null end
   order by 1, 2;
  if current_setting('turnlog.claim_check', true) is distinct from 'on' then
    return null;
  end if;
  perform set_config('turnlog.claim_check', 'off', true);
  select n.session_id, n.seq, n.message_id, n.data->>'inheritedFrom' as label, s.parent_session_id,
         (n.data->>'inheritedFrom') is not null and (n.data->>'inheritedFrom') is distinct from s.parent_session_id::text as mislabelled
    into v_bad
    from new_events n
    join turnlog.sessions s on s.session_id = n.session_id
   where n.type = 'message_appended'
     and (s.parent_session_id is not null or (n.data->>'inheritedFrom') is not null)
     and (((n.data->>'inheritedFrom') is not null and (n.data->>'inheritedFrom') is distinct from s.parent_session_id::text)
          or exists (select 1 from turnlog.events e
                      where e.message_id = n.message_id and e.session_id = n.session_id
                        and e.type = 'message_appended' and e.seq <> n.seq))
   order by n.session_id, n.seq
   limit 1;
  if not found then
    return null;
  elsif v_bad.mislabelled then
    raise exception using errcode = 'TLA01',
      message = format('event %s of session %s copies message %s from %s, but a copy must name the session''s fork parent (%s) in data.inheritedFrom',
                       v_bad.seq, v_bad.session_id, v_bad.message_id, v_bad.label, coalesce(v_bad.parent_session_id::text, 'none: the session is not a fork'));
  else
    raise exception using errcode = 'TLA01',
      message = format('event %s of session %s appends message %s, which the session already holds (a session holds a message id once)',
                       v_bad.seq, v_bad.session_id, v_bad.message_id);
  end if;
end
$fn$;
