-- The stored predecessor of the first event of a session in an import_events call (the same checks as
-- the link trigger: it must exist, TLC01; its transaction must not be later than this one, 40001).
create function turnlog.import_predecessor(p_session uuid, p_seq bigint) returns bytea language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_hash bytea;
  v_tx xid8;
begin
  select e.hash, e.tx_id into v_hash, v_tx from turnlog.events e where e.session_id = p_session and e.seq = p_seq - 1;
  if v_hash is null then
    raise exception 'turnlog: event % of session % has no predecessor', p_seq, p_session using errcode = 'TLC01';
  end if;
  if v_tx > pg_current_xact_id() then
    raise exception 'turnlog: session % was appended to by a later transaction that committed first; retry the transaction', p_session
      using errcode = '40001',
            detail = format('this transaction id %s, event %s written by transaction %s', pg_current_xact_id(), p_seq - 1, v_tx),
            hint = 'subscriptions deliver in transaction-id order; see docs/subscriptions.md';
  end if;
  return v_hash;
end
$fn$;
