-- Raised by import_events for the first event whose supplied link is not the one it computes.
create function turnlog.import_link_mismatch(p_session uuid, p_seq bigint, p_supplied bytea, p_computed bytea) returns bytea
language plpgsql set search_path = pg_catalog, pg_temp as $fn$
begin
  raise exception 'turnlog: the chain link of event % of session % does not verify', p_seq, p_session
    using errcode = 'TLC02',
          detail = json_build_object('sessionId', p_session, 'seq', p_seq, 'suppliedHash', encode(p_supplied, 'hex'),
                                     'computedHash', encode(p_computed, 'hex'))::text;
end
$fn$;
