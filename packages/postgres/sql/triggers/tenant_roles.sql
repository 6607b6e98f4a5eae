-- A role that passes every policy cannot be bound to a tenant (functions/tenant_roles_check.sql).
create trigger tenant_roles_check before insert or update on turnlog.tenant_roles
  for each row execute function turnlog.tenant_roles_check();
