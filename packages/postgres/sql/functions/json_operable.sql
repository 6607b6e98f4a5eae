-- A copy of a placeholder (or of the payload it replaces) that JSON operators accept: each escape they
-- refuse (\u0000 and every LONE surrogate half) becomes '?' followed by its four hex digits, so two keys
-- that differed only there stay two keys (a bare '?' for all of them made them duplicates, and the shape
-- check refused a true placeholder: found by the placeholder-rule property). A surrogate PAIR written as
-- escapes (\ud83d\ude00, what Python's json.dumps writes for an emoji) is left for the operators, which
-- read it as its character: a payload stored with the pair escaped and a placeholder made with
-- JSON.stringify (the character itself) then compare equal (turnlog.placeholder_follows, since 0008).
-- Used only to check a placeholder; the placeholder stored is the original text. (Pairing ids are kept
-- in placeholders and may hold such characters.)
create function turnlog.json_operable(p json) returns json language sql immutable
set search_path = pg_catalog, pg_temp as $fn$
  select regexp_replace(
           regexp_replace(p::text, '\\u(0000|[dD][89abAB][0-9a-fA-F]{2}(?!\\u[dD][c-fC-F][0-9a-fA-F]{2}))', '\\u003f\1', 'g'),
           '(?<!\\u[dD][89abAB][0-9a-fA-F]{2})\\u([dD][c-fC-F][0-9a-fA-F]{2})', '\\u003f\1', 'g')::json
$fn$;
