-- One row per message id and tenant: the session that introduced it. Its primary key is the arbiter of
-- "a message id belongs to one session" (per tenant) whatever path writes the event (events_claim_ids).
-- tenant_scope: '' for sessions without a tenant, '=' followed by the tenant id otherwise (a primary
-- key column cannot be null). Nobody but the owner reads or writes it.
create table turnlog.message_ids (
  message_id uuid not null,
  tenant_scope text not null,
  session_id uuid not null,
  primary key (message_id, tenant_scope)
);
