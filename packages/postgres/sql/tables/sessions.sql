-- One row per session: its tenant, its version (the number of events; the row is the append lock) and
-- where it was forked from.
create table turnlog.sessions (
  session_id uuid primary key,
  tenant_id text,
  version bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  metadata json,
  parent_session_id uuid,
  parent_version bigint,
  fork_at uuid
);
create index sessions_tenant_idx on turnlog.sessions (tenant_id, session_id);
