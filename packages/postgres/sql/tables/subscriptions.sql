-- One row per named subscription of a tenant: the key of the last event delivered (or skipped by its
-- filter). Consumers move it with compare-and-set updates only, through the subscription_* functions
-- (docs/subscriptions.md); writers have no write privilege on the table. A name is unique per tenant:
-- two tenants may both have a 'projector', and the untenanted callers (tenant_id null) have theirs.
-- The key (name, tenant_id) cannot be the primary key (tenant_id may be null): a surrogate is. The two
-- columns are last because migration 0005 added them to existing tables.
create table turnlog.subscriptions (
  name text not null,
  tx_id xid8 not null,
  global_position bigint not null,
  delivered bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_error json,
  -- a consumer that LISTENs renews this lease while it waits; writers notify only while one is live
  listening_until timestamptz,
  -- the tenant of the caller that created it (turnlog.bound_tenant), as turnlog.sessions.tenant_id
  tenant_id text,
  subscription_id bigint generated always as identity primary key,
  constraint subscriptions_name_tenant_key unique nulls not distinct (name, tenant_id)
);
