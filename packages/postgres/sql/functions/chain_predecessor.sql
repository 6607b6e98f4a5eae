-- The link the event at p_seq of session p_session chains from, for the inserting transaction p_tx: the
-- genesis (32 zero bytes, core's GENESIS_HASH) for seq 1, else the stored hash of event p_seq - 1. The one
-- place of the genesis and of both checks every insert path needs:
-- - TLC01 when the predecessor is missing (seqs are contiguous);
-- - 40001 when the predecessor was written by a later transaction (p_tx is older) that committed first:
--   subscriptions deliver in transaction-id order, so per session commit order must be seq order; the
--   writer retries with a new transaction (a new, higher id). The store's own writes lock the session row
--   before they take an id, so only caller transactions that wrote something else first can meet this.
-- Volatile (the default): it must see the rows inserted before it by the same statement (a multi-row
-- insert links each row to the one before). No pinned search_path (a SET is a save and restore per call, and events_link calls it per row): its
-- only callers, events_link and import_events, pin it, and every object here is qualified. Owner only.
create function turnlog.chain_predecessor(p_session uuid, p_seq bigint, p_tx xid8) returns bytea language plpgsql as $fn$
declare
  v_hash bytea;
  v_tx xid8;
begin
  if p_seq = 1 then
    return '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
  end if;
  select e.hash, e.tx_id into v_hash, v_tx from turnlog.events e where e.session_id = p_session and e.seq = p_seq - 1;
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
