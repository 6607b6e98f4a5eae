-- Privileges (docs/security.md). Nothing for PUBLIC; the writer appends, never rewrites.
revoke all on schema turnlog from public;
grant usage on schema turnlog to turnlog_writer, turnlog_reader;

revoke all on turnlog.sessions, turnlog.events, turnlog.live_messages, turnlog.conflicts, turnlog.tenant_roles from public;
grant select on turnlog.sessions, turnlog.events, turnlog.live_messages, turnlog.conflicts, turnlog.tenant_roles
  to turnlog_writer, turnlog_reader;
-- openStore checks for pending migrations (reads only; applying them needs the owner)
grant select on turnlog.schema_migrations, turnlog.schema_migrations_lock to turnlog_writer, turnlog_reader;
grant insert on turnlog.sessions, turnlog.conflicts to turnlog_writer;
-- not hash (the trigger computes it), tx_id (commit order for subscriptions), payload_digest (redaction only)
grant insert (session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at) on turnlog.events to turnlog_writer;
-- subscription checkpoints: read through their row policy; written only through the subscription_*
-- functions (no write privilege, so no lock mode that blocks consumers: LOCK needs one on PostgreSQL 15)
revoke all on turnlog.subscriptions from public;
grant select on turnlog.subscriptions to turnlog_writer, turnlog_reader;
-- the session row is the append lock (SELECT … FOR UPDATE needs an UPDATE privilege) and holds the version
grant update (version, updated_at) on turnlog.sessions to turnlog_writer;
-- the arbiter of message ids: the owner only (events_claim_ids runs as the owner)
revoke all on turnlog.message_ids from public;

-- Internal functions: the owner only (triggers, projection, tenant checks, import helpers).
revoke all on function turnlog.events_link() from public;
revoke all on function turnlog.events_project() from public;
revoke all on function turnlog.events_claim_ids() from public;
revoke all on function turnlog.events_notify() from public;
revoke all on function turnlog.project_event(turnlog.events) from public;
revoke all on function turnlog.rebuild_session_unchecked(uuid) from public;
revoke all on function turnlog.rebuild_sessions_unchecked(uuid[]) from public;
revoke all on function turnlog.caller_role() from public;
revoke all on function turnlog.caller_sees_all(text) from public;
revoke all on function turnlog.caller_may_access(text) from public;
revoke all on function turnlog.accessible_session_tenant(uuid) from public;
revoke all on function turnlog.tenant_roles_check() from public;
revoke all on function turnlog.chain_predecessor(uuid, bigint, xid8) from public;
revoke all on function turnlog.import_link_mismatch(uuid, bigint, bytea, bytea) from public;
-- The redaction placeholder checks (json_operable, is_structural_placeholder, is_redaction_placeholder,
-- placeholder_follows, placeholder_digest) keep the default privileges: immutable functions of their
-- arguments that read no table.

-- The store's entry points: the writer (and the reader for reads).
revoke all on function turnlog.append_messages(uuid, bigint, json, json, json, json, json) from public;
grant execute on function turnlog.append_messages(uuid, bigint, json, json, json, json, json) to turnlog_writer;
revoke all on function turnlog.append_batches(json, json, json, json, json, json, json, json) from public;
grant execute on function turnlog.append_batches(json, json, json, json, json, json, json, json) to turnlog_writer;
revoke all on function turnlog.rebuild_session(uuid) from public;
grant execute on function turnlog.rebuild_session(uuid) to turnlog_writer;
revoke all on function turnlog.rebuild_sessions(uuid[]) from public;
grant execute on function turnlog.rebuild_sessions(uuid[]) to turnlog_writer;
revoke all on function turnlog.rebuild_read(uuid[]) from public;
grant execute on function turnlog.rebuild_read(uuid[]) to turnlog_writer, turnlog_reader;
revoke all on function turnlog.load_session(uuid) from public;
grant execute on function turnlog.load_session(uuid) to turnlog_writer, turnlog_reader;
revoke all on function turnlog.redact_message(uuid, uuid, json, json, json, json, json, json) from public;
grant execute on function turnlog.redact_message(uuid, uuid, json, json, json, json, json, json) to turnlog_writer;
revoke all on function turnlog.lock_message_sessions(uuid, uuid) from public;
grant execute on function turnlog.lock_message_sessions(uuid, uuid) to turnlog_writer;
revoke all on function turnlog.import_events(text, text, text, text, text, text, text, text, text, text, text) from public;
grant execute on function turnlog.import_events(text, text, text, text, text, text, text, text, text, text, text) to turnlog_writer;
-- subscription checkpoints: the consumer's writes (the reader only reads them)
revoke all on function turnlog.subscription_create(text, text, xid8, bigint) from public;
grant execute on function turnlog.subscription_create(text, text, xid8, bigint) to turnlog_writer;
revoke all on function turnlog.subscription_move(text, text, xid8, bigint, xid8, bigint, bigint) from public;
grant execute on function turnlog.subscription_move(text, text, xid8, bigint, xid8, bigint, bigint) to turnlog_writer;
revoke all on function turnlog.subscription_renew_lease(text, text, double precision) from public;
grant execute on function turnlog.subscription_renew_lease(text, text, double precision) to turnlog_writer;
revoke all on function turnlog.subscription_record_error(text, text, json) from public;
grant execute on function turnlog.subscription_record_error(text, text, json) to turnlog_writer;
revoke all on function turnlog.subscription_drop(text, text) from public;
grant execute on function turnlog.subscription_drop(text, text) to turnlog_writer;
revoke all on function turnlog.subscription_rebase(text, text, xid8, bigint) from public;
grant execute on function turnlog.subscription_rebase(text, text, xid8, bigint) to turnlog_writer;
-- every policy on sessions and subscriptions calls it, as the querying role
revoke all on function turnlog.bound_tenant(name) from public;
grant execute on function turnlog.bound_tenant(name) to turnlog_writer, turnlog_reader;
