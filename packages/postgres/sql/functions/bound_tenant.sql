-- The tenant the caller acts for: the login's (session_user) when the login is mapped, else the one of
-- p_role (the role in effect) when the login may act as it (it is that role, a member of it, or a
-- superuser), else null (the sessions without a tenant). SECURITY DEFINER: it reads every row of
-- tenant_roles, whose policy shows a role only its own row. PL/pgSQL, not SQL: every policy evaluates it
-- once per statement, and a SQL function that cannot be inlined (SECURITY DEFINER, SET) has its body
-- parsed and planned again at each statement, where PL/pgSQL keeps its plans for the connection
-- (measured: a quarter of the instructions of a 2-message append_messages).
create function turnlog.bound_tenant(p_role name) returns text language plpgsql stable security definer
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_tenant text;
begin
  select t.tenant_id into v_tenant from turnlog.tenant_roles t where t.role_name = session_user::text;
  if found then
    return v_tenant;
  end if;
  select t.tenant_id into v_tenant from turnlog.tenant_roles t
   where t.role_name = p_role::text and pg_catalog.pg_has_role(session_user, p_role, 'MEMBER');
  return v_tenant;
end
$fn$;
