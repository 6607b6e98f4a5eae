-- Subscription checkpoints (since 0005) carry their own tenant, under the rule of sessions
-- (tenant_isolation.sql): a caller reads the checkpoints of its tenant (an untenanted caller: those
-- without one); the owner, superusers and BYPASSRLS roles read every one. Writers and readers may only
-- SELECT the table; the subscription_* functions write it, applying the same rule.
alter table turnlog.subscriptions enable row level security;
create policy subscriptions_tenant on turnlog.subscriptions
  using (tenant_id is not distinct from (select turnlog.bound_tenant(current_user)));
