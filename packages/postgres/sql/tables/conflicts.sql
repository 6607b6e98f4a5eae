-- Conflict evidence: an append that reused a message id with other content, kept for review.
create table turnlog.conflicts (
  session_id uuid not null,
  conflict_id uuid not null,
  message_id uuid not null,
  reason text not null,
  stored_hash bytea,
  incoming_hash bytea not null,
  other_session_id uuid,
  incoming_payload json not null,
  detected_at timestamptz not null default now(),
  primary key (session_id, conflict_id)
);
