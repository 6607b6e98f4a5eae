-- True when redaction placeholder p FOLLOWS orig, the payload it replaces: p is orig with content
-- removed and nothing added, so the redaction path cannot write content, change a speaker or forge a
-- tool call (turnlog.redact_message checks it for every placeholder, beside its shape). Recursively:
-- a string of p is '[redacted]', '{}' (openai-chat's emptied function arguments) or the string at the
-- same place of orig; a number is 0; a boolean or null is orig's value at that place; an object needs
-- an object in orig whose keys include every key of p (keys may be dropped, never added); an array
-- needs an array in orig at least as long, item by item. Both are compared as the caller passes them:
-- turnlog.json_operable copies of each (SQL JSON operators refuse \u0000 and lone surrogates).
-- p_format: the payload's format at the top (an absent format is 'openai-chat'), null for a value
-- inside it. At the top, { "redacted": true } (the placeholder of a format without a redaction hook)
-- follows any payload, and openai-chat's content '[redacted]' need not be in orig (an assistant message
-- may have none).
create function turnlog.placeholder_follows(p json, orig json, p_format text) returns boolean language plpgsql immutable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_kind text := json_typeof(p);
  v_orig text := json_typeof(orig);
begin
  if v_kind is null or v_orig is null then return false; end if;
  if p_format is not null and v_kind = 'object' then
    if (select array_agg(k) from json_object_keys(p) k) = array['redacted'] and json_typeof(p->'redacted') = 'boolean'
       and (p->>'redacted') = 'true' then
      return true;
    end if;
    if p_format = 'openai-chat' and v_orig = 'object' then
      return not exists (select 1 from json_object_keys(p) k group by k having count(*) > 1)
         and not exists (select 1 from json_each(p) e
                           left join (select distinct on (o.key) o.key, o.value from json_each(orig) with ordinality o(key, value, n)
                                       order by o.key, o.n desc) o on o.key = e.key
                          where not (case when e.key = 'content' then json_typeof(e.value) = 'string' and (e.value #>> '{}') = '[redacted]'
                                          else coalesce(turnlog.placeholder_follows(e.value, o.value, null), false) end));
    end if;
  end if;
  if v_kind = 'string' then
    return (p #>> '{}') in ('[redacted]', '{}') or (v_orig = 'string' and (p #>> '{}') = (orig #>> '{}'));
  elsif v_kind = 'number' then
    return (p #>> '{}')::numeric = 0;
  elsif v_kind in ('boolean', 'null') then
    return v_orig = v_kind and (p #>> '{}') is not distinct from (orig #>> '{}');
  elsif v_kind = 'array' then
    return v_orig = 'array' and json_array_length(p) <= json_array_length(orig)
       and not exists (select 1 from json_array_elements(p) with ordinality a(v, i)
                         join json_array_elements(orig) with ordinality b(v, i) on b.i = a.i
                        where not coalesce(turnlog.placeholder_follows(a.v, b.v, null), false));
  elsif v_kind = 'object' then
    -- orig's value of each key (its last one, as JSON.parse and the JSON operators take it), joined once:
    -- orig -> key for each key would read orig again for every key
    return v_orig = 'object'
       and not exists (select 1 from json_object_keys(p) k group by k having count(*) > 1)
       and not exists (select 1 from json_each(p) e
                         left join (select distinct on (o.key) o.key, o.value from json_each(orig) with ordinality o(key, value, n)
                                     order by o.key, o.n desc) o on o.key = e.key
                        where not coalesce(turnlog.placeholder_follows(e.value, o.value, null), false));
  end if;
  return false;
end
$fn$;
