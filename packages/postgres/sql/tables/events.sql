-- The event log: one row per event, chained per session (hash: functions/chain_link.sql).
-- payload_digest: the SHA-256 of the original payload text of an event a redaction scrubbed (the chain
-- covers it in place of the placeholder).
create table turnlog.events (
  session_id uuid not null,
  seq bigint not null,
  global_position bigint generated always as identity,
  tx_id xid8 not null default pg_current_xact_id(),
  event_id uuid not null,
  type text not null,
  message_id uuid,
  content_hash bytea,
  payload json,
  data json not null,
  recorded_at timestamptz not null default now(),
  hash bytea not null,
  payload_digest bytea,
  primary key (session_id, seq)
);
create index events_message_id_idx on turnlog.events (message_id, session_id) where message_id is not null;
-- Subscription readers walk the log in (tx_id, global_position) order from a checkpoint up to the
-- snapshot's xmin.
create index events_tx_order_idx on turnlog.events (tx_id, global_position);
