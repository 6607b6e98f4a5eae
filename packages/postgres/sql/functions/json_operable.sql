-- A copy of a placeholder that JSON operators accept: the escapes they refuse (\u0000 and every
-- surrogate half) become \u003f. Used only to check a placeholder's shape; the placeholder stored is
-- the original text. (Pairing ids are kept in placeholders and may hold such characters.)
create function turnlog.json_operable(p json) returns json language sql immutable
set search_path = pg_catalog, pg_temp as $fn$
  select regexp_replace(p::text, '\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', '\\u003f', 'g')::json
$fn$;
