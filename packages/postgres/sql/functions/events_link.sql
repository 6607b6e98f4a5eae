-- The chain link of an inserted event (BEFORE INSERT, per row): chain_link from the predecessor's link
-- (chain_predecessor: the genesis for seq 1, TLC01 when missing, 40001 when written by a later
-- transaction that committed first). A row inserted already scrubbed (an import of an export taken
-- after a redaction) carries payload_digest, which chain_link uses in place of the placeholder: its link
-- is the one written before the scrub. Runs as the owner: the writer needs no privilege on anything the
-- link reads.
create function turnlog.events_link() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
begin
  new.hash := turnlog.chain_link(turnlog.chain_predecessor(new.session_id, new.seq, new.tx_id), new.session_id, new.seq,
    new.event_id, new.type, new.message_id, new.content_hash, new.data, new.payload, new.payload_digest);
  return new;
end
$fn$;
