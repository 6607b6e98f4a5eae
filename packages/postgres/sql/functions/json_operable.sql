-- A copy of a placeholder that JSON operators accept: each escape they refuse (\u0000 and every
-- surrogate half) becomes '?' followed by its four hex digits, so two keys that differed only there stay
-- two keys (a bare '?' for all of them made them duplicates, and the shape check refused a true
-- placeholder: found by the placeholder-rule property). Used only to check a placeholder's shape; the placeholder stored
-- is the original text. (Pairing ids are kept in placeholders and may hold such characters.)
create function turnlog.json_operable(p json) returns json language sql immutable
set search_path = pg_catalog, pg_temp as $fn$
  select regexp_replace(p::text, '\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', '\\u003f\1', 'g')::json
$fn$;
