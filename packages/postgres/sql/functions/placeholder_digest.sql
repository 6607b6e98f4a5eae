-- The SHA-256 of a placeholder's stored text: what a scrub record's placeholderDigest holds.
-- Core's placeholderDigest() computes the same over JSON.stringify of the parsed placeholder (a test
-- pins both to one vector).
create function turnlog.placeholder_digest(p json) returns bytea language sql immutable
set search_path = pg_catalog, pg_temp as $fn$
  select sha256(convert_to(p::text, 'UTF8'))
$fn$;
