-- True when the caller may act on sessions of tenant p_tenant: the rule of the row policies
-- (bound_tenant), for the SECURITY DEFINER entry points (they run as the owner and bypass the policies).
create function turnlog.caller_may_access(p_tenant text) returns boolean language plpgsql stable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_role text := turnlog.caller_role();
begin
  if exists (select 1 from pg_catalog.pg_roles r where r.rolname = v_role and (r.rolsuper or r.rolbypassrls))
     or pg_catalog.pg_has_role(v_role, 'turnlog_owner', 'USAGE') then
    return true;
  end if;
  return p_tenant is not distinct from turnlog.bound_tenant(v_role::name);
end
$fn$;
