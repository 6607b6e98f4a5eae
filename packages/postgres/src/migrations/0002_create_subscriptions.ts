import { sql, type Kysely } from 'kysely'

/**
 * 0002: catch-up subscriptions. The index that reads the log in transaction order, the durable named
 * checkpoints, the wake-up notification and the per-session order check (see docs/subscriptions.md).
 * Released migrations are never edited; later changes get new files.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(SQL).execute(db)
}

/** Not reversible: checkpoints are durable state. */
export async function down(): Promise<void> {
  throw new Error('0002_create_subscriptions cannot be reverted')
}

const SQL = String.raw`
-- Readers walk the log in (tx_id, global_position) order from a checkpoint up to the snapshot's xmin.
-- 'if not exists': on a large existing log, build it first with CREATE INDEX CONCURRENTLY under this
-- name, and this migration (which runs in a transaction) does not lock the table while building it.
create index if not exists events_tx_order_idx on turnlog.events (tx_id, global_position);

-- One row per named subscription: the key of the last event delivered (or skipped by its filter).
-- Consumers move it with compare-and-set updates only.
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

-- Wake-ups: one notification per inserting statement, delivered at commit (identical payloads in one
-- transaction are folded into one). Every writer path notifies, including raw SQL. Listeners re-read the
-- log; the payload carries nothing. NOTIFY serialises committing transactions on a cluster-wide queue
-- lock (measured: it halves the commit rate of 8 concurrent writers), so writers notify only while some
-- consumer holds a live listening lease (turnlog.subscriptions.listening_until); with none, appends pay
-- one lookup in this small table. Set turnlog.notify = 'off' (per role or database) to never notify;
-- subscribers then rely on polling.
create function turnlog.events_notify() returns trigger language plpgsql as $fn$
begin
  if coalesce(current_setting('turnlog.notify', true), '') <> 'off'
     and exists (select 1 from turnlog.subscriptions s where s.listening_until > now()) then
    perform pg_notify('turnlog_events', '');
  end if;
  return null;
end
$fn$;

create trigger events_notify after insert on turnlog.events
  for each statement execute function turnlog.events_notify();

-- Subscriptions deliver in tx_id order. A transaction that took its id before another one that then
-- appended to the same session and committed first would put its events behind that session's later
-- seq in delivery order. Refuse it as a serialization failure: the writer retries with a new
-- transaction (a new, higher id). The store's own writes lock the session row before they take an id,
-- so only caller transactions that wrote something else first can meet this.
create function turnlog.events_check_order() returns trigger language plpgsql as $fn$
declare
  prev_tx xid8;
begin
  if new.seq > 1 then
    select e.tx_id into prev_tx from turnlog.events e where e.session_id = new.session_id and e.seq = new.seq - 1;
    if prev_tx is not null and prev_tx > new.tx_id then
      raise exception 'turnlog: session % was appended to by a later transaction that committed first; retry the transaction', new.session_id
        using errcode = '40001',
              detail = format('this transaction id %s, event %s written by transaction %s', new.tx_id, new.seq - 1, prev_tx),
              hint = 'subscriptions deliver in transaction-id order; see docs/subscriptions.md';
    end if;
  end if;
  return new;
end
$fn$;

create trigger events_check_order before insert on turnlog.events
  for each row execute function turnlog.events_check_order();

-- Writers lock a session by updating its row. A plain UPDATE takes the transaction id before it waits for
-- the row lock, so under contention the waiters' ids need not follow the order they get the lock in
-- (and append in). With a BEFORE ROW trigger the executor locks the row first (heap_lock_tuple, which
-- takes the id only once the lock is granted) and then updates it: a transaction whose first write is
-- the session update gets an id above every earlier holder's. The trigger itself does nothing.
create function turnlog.sessions_lock_before_update() returns trigger language plpgsql as $fn$
begin
  return new;
end
$fn$;

create trigger sessions_lock_before_update before update on turnlog.sessions
  for each row execute function turnlog.sessions_lock_before_update();
`
