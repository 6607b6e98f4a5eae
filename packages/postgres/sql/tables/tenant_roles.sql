-- Which database role acts for which tenant. Maintained by the operator (as the owner); a role reads
-- only its own row.
create table turnlog.tenant_roles (
  role_name text primary key,
  tenant_id text not null,
  created_at timestamptz not null default now()
);
