-- An event inserted already scrubbed (an import of an export taken after a redaction): its link covers
-- the recorded digest, not the placeholder, exactly as before the scrub. Runs after events_link (BEFORE
-- triggers fire in name order), only for such rows (the WHEN clause keeps it off the append path).
create function turnlog.events_link_scrubbed() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  prev bytea;
begin
  if new.seq = 1 then
    prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
  else
    select e.hash into prev from turnlog.events e where e.session_id = new.session_id and e.seq = new.seq - 1;
  end if;
  new.hash := sha256(
    prev
    || convert_to(new.session_id::text || E'
' || new.seq::text || E'
' || new.event_id::text || E'
' || new.type || E'
'
       || coalesce(new.message_id::text, '') || E'
' || coalesce(encode(new.content_hash, 'hex'), '') || E'
', 'UTF8')
    || sha256(convert_to(new.data::text, 'UTF8'))
    || new.payload_digest);
  return new;
end
$fn$;
