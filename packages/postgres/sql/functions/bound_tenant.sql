-- The tenant the caller acts for: the login's (session_user) when the login is mapped, else the one of
-- p_role (the role in effect) when the login may act as it (it is that role, a member of it, or a
-- superuser), else null (the sessions without a tenant). SECURITY DEFINER: it reads every row of
-- tenant_roles, whose policy shows a role only its own row.
create function turnlog.bound_tenant(p_role name) returns text language sql stable security definer
set search_path = pg_catalog, pg_temp as $fn$
  select coalesce(
    (select t.tenant_id from turnlog.tenant_roles t where t.role_name = session_user::text),
    (select t.tenant_id from turnlog.tenant_roles t
      where t.role_name = p_role::text and pg_catalog.pg_has_role(session_user, p_role, 'MEMBER')))
$fn$;
