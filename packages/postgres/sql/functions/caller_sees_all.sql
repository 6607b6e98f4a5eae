-- True when p_role sees every session: a superuser, a BYPASSRLS role, or a role with the owner's
-- privileges (the roles the row policies do not apply to). The one statement of that half of the rule,
-- for the SECURITY DEFINER entry points (caller_may_access, append_messages, append_batches), which run
-- as the owner and apply the policies' rule themselves. SQL without SET, every name qualified: callers
-- inline it.
create function turnlog.caller_sees_all(p_role text) returns boolean language sql stable as $fn$
  select exists (select 1 from pg_catalog.pg_roles r where r.rolname = p_role and (r.rolsuper or r.rolbypassrls))
         or pg_catalog.pg_has_role(p_role, 'turnlog_owner', 'USAGE')
$fn$;
