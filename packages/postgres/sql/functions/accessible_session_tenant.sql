-- The session's tenant when the caller may act on it; raises TLS01 (exactly like an unknown session) otherwise.
create function turnlog.accessible_session_tenant(p_session uuid) returns text language plpgsql stable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_tenant text;
begin
  select s.tenant_id into v_tenant from turnlog.sessions s where s.session_id = p_session;
  if not found or not turnlog.caller_may_access(v_tenant) then
    raise exception 'session % not found', p_session using errcode = 'TLS01';
  end if;
  return v_tenant;
end
$fn$;
