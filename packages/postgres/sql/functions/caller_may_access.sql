-- True when the caller may act on sessions of tenant p_tenant: the rule of the row policies
-- (bound_tenant), for the SECURITY DEFINER entry points (they run as the owner and bypass the policies).
create function turnlog.caller_may_access(p_tenant text) returns boolean language plpgsql stable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_role text := turnlog.caller_role();
begin
  if turnlog.caller_sees_all(v_role) then
    return true;
  end if;
  return p_tenant is not distinct from turnlog.bound_tenant(v_role::name);
end
$fn$;
