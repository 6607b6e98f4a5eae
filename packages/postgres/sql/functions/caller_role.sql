-- The role the caller acts as. Inside a SECURITY DEFINER function current_user is the owner; the role
-- GUC still holds the caller's SET ROLE, and session_user is the login otherwise. No SET search_path
-- (everything is qualified or a keyword), so that callers inline it instead of running a SQL function.
create function turnlog.caller_role() returns text language sql stable as $fn$
  select case when pg_catalog.current_setting('role') = 'none' then session_user::text else pg_catalog.current_setting('role') end
$fn$;
