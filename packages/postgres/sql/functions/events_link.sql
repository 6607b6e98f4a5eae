-- The chain link of an inserted event (BEFORE INSERT, per row): the previous event's hash (32 zero bytes
-- for seq 1; TLC01 when it is missing) chained with the event's fields (chain_hash). Also the per-session
-- commit-order check: subscriptions deliver in transaction-id order, so an event whose predecessor was
-- written by a later transaction that committed first is refused (40001, the writer retries). Runs as the
-- owner: the writer needs no privilege on anything the link reads.
create function turnlog.events_link() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  prev bytea;
  prev_tx xid8;
begin
  if new.seq = 1 then
    prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
  else
    select e.hash, e.tx_id into prev, prev_tx from turnlog.events e where e.session_id = new.session_id and e.seq = new.seq - 1;
    if prev is null then
      raise exception 'turnlog: event % of session % has no predecessor', new.seq, new.session_id
        using errcode = 'TLC01';
    end if;
    -- per-session commit order = seq order (subscriptions read in transaction-id order): an event whose
    -- predecessor was written by a later transaction that committed first is refused (0002's rule)
    if prev_tx > new.tx_id then
      raise exception 'turnlog: session % was appended to by a later transaction that committed first; retry the transaction', new.session_id
        using errcode = '40001',
              detail = format('this transaction id %s, event %s written by transaction %s', new.tx_id, new.seq - 1, prev_tx),
              hint = 'subscriptions deliver in transaction-id order; see docs/subscriptions.md';
    end if;
  end if;
  new.hash := turnlog.chain_hash(prev, new.session_id, new.seq, new.event_id, new.type, new.message_id,
    new.content_hash, new.data, new.payload);
  return new;
end
$fn$;
