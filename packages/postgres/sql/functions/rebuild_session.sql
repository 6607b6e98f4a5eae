-- Recomputes one session's projection: runs as the owner (it deletes projection rows) after the caller's
-- tenant check (TLS01, exactly like an unknown session).
create function turnlog.rebuild_session(p_session uuid) returns void language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
begin
  perform turnlog.accessible_session_tenant(p_session);
  perform turnlog.rebuild_session_unchecked(p_session);
end
$fn$;
