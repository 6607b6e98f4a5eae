-- One row per named subscription: the key of the last event delivered (or skipped by its filter).
-- Consumers move it with compare-and-set updates only (docs/subscriptions.md).
create table turnlog.subscriptions (
  name text primary key,
  tx_id xid8 not null,
  global_position bigint not null,
  delivered bigint not null default 0,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  last_error json,
  -- a consumer that LISTENs renews this lease while it waits; writers notify only while one is live
  listening_until timestamptz
);
