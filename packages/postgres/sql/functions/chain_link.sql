-- One link of a session's hash chain (format 1), the one SQL statement of the rule; every SQL path that
-- computes a link calls it (events_link for every insert, import_events for an import). core's
-- chainHash is the independent verifier; both are pinned to packages/core/test/chain-vectors.json.
--   sha256(prev || utf8(session \n seq \n event \n type \n message \n content_hash_hex \n)
--               || sha256(utf8(data text)) || payload part)
-- Absent values are empty strings. The payload part is p_payload_digest when set (an event a redaction
-- scrubbed: the SHA-256 of its original payload text, so its link still verifies) and
-- sha256(utf8(payload text, '' when null)) otherwise. The texts are the stored JSON texts.
-- Stable, not immutable: convert_to is stable, and only then can the planner inline the body into the
-- caller's expression (an immutable function with a stable body is called, not inlined: ~40 µs a row).
create function turnlog.chain_link(p_prev bytea, p_session uuid, p_seq bigint, p_event uuid, p_type text,
  p_message uuid, p_content bytea, p_data json, p_payload json, p_payload_digest bytea) returns bytea
language sql stable parallel safe as $fn$
  select sha256(
    p_prev
    || convert_to(p_session::text || E'\n' || p_seq::text || E'\n' || p_event::text || E'\n' || p_type || E'\n'
       || coalesce(p_message::text, '') || E'\n' || coalesce(encode(p_content, 'hex'), '') || E'\n', 'UTF8')
    || sha256(convert_to(p_data::text, 'UTF8'))
    || coalesce(p_payload_digest, sha256(convert_to(coalesce(p_payload::text, ''), 'UTF8'))))
$fn$;
