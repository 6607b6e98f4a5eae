-- The arbiter: claims every id an inserted event introduces (a message_appended that is not a fork's
-- copy), in key order so that two statements claiming overlapping ids never wait on each other in a
-- cycle. Runs as the owner (writers have no privilege on message_ids; the session's tenant is read
-- past row level security, which already let the caller insert the event). Fires before the
-- projection trigger (same timing, name order), so a statement that loses does no projection work.
-- A copy, or an append into a fork session, goes through claims_id (its label names the fork parent;
-- the session holds the id once); the common append (no copy, no fork) costs one more test per row.
create function turnlog.events_claim_ids() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
begin
  insert into turnlog.message_ids (message_id, tenant_scope, session_id)
  select n.message_id, coalesce('=' || s.tenant_id, ''), n.session_id
    from new_events n
    join turnlog.sessions s on s.session_id = n.session_id
   where n.type = 'message_appended'
     and case when s.parent_session_id is null and (n.data->>'inheritedFrom') is null then true
              else turnlog.claims_id(n.session_id, n.seq, n.message_id, n.data->>'inheritedFrom', s.parent_session_id) end
   order by 1, 2;
  return null;
end
$fn$;
