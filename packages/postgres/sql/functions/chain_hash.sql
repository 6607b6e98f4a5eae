create function turnlog.chain_hash(prev bytea, p_session uuid, p_seq bigint, p_event uuid, p_type text,
  p_message uuid, p_content bytea, p_data json, p_payload json) returns bytea
-- stable, not immutable: convert_to is stable, and only then can the planner inline the body into the
-- trigger's expression (an immutable function with a stable body is called, not inlined: ~40 µs a row)
language sql stable parallel safe as $fn$
  select sha256(
    prev
    || convert_to(p_session::text || E'\n' || p_seq::text || E'\n' || p_event::text || E'\n' || p_type || E'\n'
       || coalesce(p_message::text, '') || E'\n' || coalesce(encode(p_content, 'hex'), '') || E'\n', 'UTF8')
    || sha256(convert_to(p_data::text, 'UTF8'))
    || sha256(convert_to(coalesce(p_payload::text, ''), 'UTF8')))
$fn$;
