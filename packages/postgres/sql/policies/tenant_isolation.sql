-- Row level security. A role sees the sessions of the tenant it is bound to (functions/bound_tenant.sql);
-- an unbound role sees only the sessions without a tenant. The owner, superusers and BYPASSRLS roles see
-- everything. Policies name tables only through sessions, whose own policy holds the tenant rule, so the
-- rule is written once. The tenant is an InitPlan: one lookup per statement. The child tables' rule is a
-- correlated scalar subquery on purpose: one primary-key probe of sessions per row. An EXISTS would be
-- turned into a hashed subplan over every session of the tenant (cost proportional to the tenant's size
-- on every statement) and would hide the message_id index.
alter table turnlog.tenant_roles enable row level security;
create policy tenant_roles_own on turnlog.tenant_roles for select
  using (role_name = current_user::text or role_name = session_user::text);

alter table turnlog.sessions enable row level security;
create policy sessions_tenant on turnlog.sessions
  using (tenant_id is not distinct from (select turnlog.bound_tenant(current_user)));

alter table turnlog.events enable row level security;
create policy events_tenant on turnlog.events
  using ((select true from turnlog.sessions s where s.session_id = events.session_id));

alter table turnlog.live_messages enable row level security;
create policy live_messages_tenant on turnlog.live_messages
  using ((select true from turnlog.sessions s where s.session_id = live_messages.session_id));

alter table turnlog.conflicts enable row level security;
create policy conflicts_tenant on turnlog.conflicts
  using ((select true from turnlog.sessions s where s.session_id = conflicts.session_id));

-- nobody but the owner reads or writes message_ids; the policy is there should a grant ever be added
alter table turnlog.message_ids enable row level security;
create policy message_ids_tenant on turnlog.message_ids
  using ((select true from turnlog.sessions s where s.session_id = message_ids.session_id));
