-- A role that passes every policy cannot be bound to a tenant.
create function turnlog.tenant_roles_check() returns trigger language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
begin
  if exists (select 1 from pg_catalog.pg_roles r
              where r.rolname = new.role_name
                and (r.rolsuper or r.rolbypassrls or pg_catalog.pg_has_role(r.oid, 'turnlog_owner', 'MEMBER'))) then
    raise exception 'role % passes every row policy (superuser, BYPASSRLS or a member of turnlog_owner): it cannot be bound to a tenant', new.role_name
      using errcode = '42501',
            hint = 'map a login that is a member of turnlog_writer or turnlog_reader only (docs/security.md)';
  end if;
  return new;
end
$fn$;
