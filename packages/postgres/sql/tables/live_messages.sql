-- The inline projection: the live messages of each session in order (kept by the events_project trigger).
create table turnlog.live_messages (
  session_id uuid not null,
  message_id uuid not null,
  position bigint not null,
  event_seq bigint not null,
  partial boolean not null default false,
  primary key (session_id, message_id)
);
create index live_messages_position_idx on turnlog.live_messages (session_id, position);
