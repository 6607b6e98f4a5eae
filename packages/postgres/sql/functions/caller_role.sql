-- The role the caller acts as. Inside a SECURITY DEFINER function current_user is the owner; the role
-- GUC still holds the caller's SET ROLE, and session_user is the login otherwise.
create function turnlog.caller_role() returns text language sql stable
set search_path = pg_catalog, pg_temp as $fn$
  select case when current_setting('role') = 'none' then session_user::text else current_setting('role') end
$fn$;
