-- One row per session: its tenant, its version (the number of events; the row is the append lock),
-- where it was forked from, and appends_only (0007): true while every event of the session is a
-- message_appended that is not deferred, so its live list is its events in seq order and load reads
-- them directly (the projection trigger clears it; rebuild recomputes it).
create table turnlog.sessions (
  session_id uuid primary key,
  tenant_id text,
  version bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  metadata json,
  parent_session_id uuid,
  parent_version bigint,
  fork_at uuid,
  appends_only boolean not null default true
);
create index sessions_tenant_idx on turnlog.sessions (tenant_id, session_id);
