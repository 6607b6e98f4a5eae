-- The link the event at p_seq of session p_session chains from, for the inserting transaction p_tx: the
-- genesis (32 zero bytes, core's GENESIS_HASH) for seq 1, else the stored hash of event p_seq - 1. The one
-- place of the genesis and of both checks every insert path needs:
-- - TLC01 when the predecessor is missing (seqs are contiguous);
-- - 40001 when the predecessor was written by a later transaction (p_tx is older) that committed first:
--   subscriptions deliver in transaction-id order, so per session commit order must be seq order; the
--   writer retries with a new transaction (a new, higher id). The store's own writes lock the session row
--   before they take an id, so only caller transactions that wrote something else first can meet this.
-- Both checks read the session's log as the owner, and events_link runs before the row policy checks
-- the inserted row: for a session the caller may not act on (caller_may_access: another tenant's, or one
-- that does not exist) either error would tell a raw writer that the session exists, how long its log
-- is, or that it was appended to since the writer's transaction began. Such a caller gets what the row
-- policy answers instead (42501, its message), as at seq 1 and for a predecessor found, so the answer
-- is one whatever the session holds (since 0010; security.md, "Tenant isolation"). Only the error paths
-- pay for the check.
-- Volatile (the default): it must see the rows inserted before it by the same statement (a multi-row
-- insert links each row to the one before). No pinned search_path (a SET is a save and restore per call, and events_link calls it per row): its
-- callers, events_link, import_events and the append functions, pin it, and every object here is qualified. Owner only.
create function turnlog.chain_predecessor(p_session uuid, p_seq bigint, p_tx xid8) returns bytea language plpgsql as $fn$
declare
  v_hash bytea;
  v_tx xid8;
begin
  if p_seq = 1 then
    return '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
  end if;
  select e.hash, e.tx_id into v_hash, v_tx from turnlog.events e where e.session_id = p_session and e.seq = p_seq - 1;
  -- nested, not one condition: the outer test stays a plpgsql simple expression (a subquery in it would
  -- run the executor on every call: ≈ 11 µs a call against ≈ 4.5, measured), and only errors pay
  if v_hash is null or v_tx > p_tx then
    if not coalesce((select turnlog.caller_may_access(s.tenant_id) from turnlog.sessions s where s.session_id = p_session),
                    turnlog.caller_sees_all(turnlog.caller_role())) then
      raise exception 'new row violates row-level security policy for table "events"' using errcode = '42501';
    end if;
  end if;
  if v_hash is null then
    raise exception 'turnlog: event % of session % has no predecessor', p_seq, p_session using errcode = 'TLC01';
  end if;
  if v_tx > p_tx then
    raise exception 'turnlog: session % was appended to by a later transaction that committed first; retry the transaction', p_session
      using errcode = '40001',
            detail = format('this transaction id %s, event %s written by transaction %s', p_tx, p_seq - 1, v_tx),
            hint = 'subscriptions deliver in transaction-id order; see docs/subscriptions.md';
  end if;
  return v_hash;
end
$fn$;
