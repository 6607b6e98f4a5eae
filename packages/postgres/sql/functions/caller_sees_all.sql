-- True when p_role sees every session: a superuser, a BYPASSRLS role, or a role with the owner's
-- privileges (the roles the row policies do not apply to). The one statement of that half of the rule,
-- for the SECURITY DEFINER entry points (caller_may_access, append_messages, append_batches), which run
-- as the owner and apply the policies' rule themselves. PL/pgSQL, not SQL: a SQL function with a
-- subquery is not inlined, so its body would be parsed and planned again at every call (measured: 0.1 ms
-- of a re-sent group's 0.6); every name is qualified, so it needs no SET search_path.
create function turnlog.caller_sees_all(p_role text) returns boolean language plpgsql stable as $fn$
begin
  return exists (select 1 from pg_catalog.pg_roles r where r.rolname = p_role and (r.rolsuper or r.rolbypassrls))
         or pg_catalog.pg_has_role(p_role, 'turnlog_owner', 'USAGE');
end
$fn$;
