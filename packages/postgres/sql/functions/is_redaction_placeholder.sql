-- True for exactly the payloads redactedPayload() (core) makes: for openai-chat { role, content: '[redacted]' }
-- plus the ids tool-call pairing needs (strings: each call's id / call_id / type, its function's name and
-- arguments '{}', a custom tool call's custom name and input '[redacted]'); for another format a structural placeholder
-- (turnlog.is_structural_placeholder: its types and pairing ids, every other string '[redacted]').
-- Nothing else may replace a payload.
create function turnlog.is_redaction_placeholder(p json, p_format text) returns boolean language plpgsql immutable
set search_path = pg_catalog, pg_temp as $fn$
declare
  c json;
begin
  if json_typeof(p) is distinct from 'object' then return false; end if;
  if p_format is not null and p_format <> 'openai-chat' then return coalesce(turnlog.is_structural_placeholder(p, null), false); end if;
  if exists (select 1 from json_object_keys(p) k group by k having count(*) > 1)
     or exists (select 1 from json_object_keys(p) k where k not in ('role', 'content', 'tool_call_id', 'call_id', 'tool_calls')) then
    return false;
  end if;
  if (p->>'role') is null or (p->>'role') not in ('system', 'developer', 'user', 'assistant', 'tool')
     or json_typeof(p->'content') is distinct from 'string' or (p->>'content') <> '[redacted]' then
    return false;
  end if;
  if (p->'tool_call_id' is not null and json_typeof(p->'tool_call_id') <> 'string')
     or (p->'call_id' is not null and json_typeof(p->'call_id') <> 'string') then
    return false;
  end if;
  if p->'tool_calls' is not null then
    if json_typeof(p->'tool_calls') <> 'array' then return false; end if;
    for c in select value from json_array_elements(p->'tool_calls') loop
      if json_typeof(c) <> 'object' then return false; end if;
      if exists (select 1 from json_object_keys(c) k group by k having count(*) > 1)
         or exists (select 1 from json_object_keys(c) k where k not in ('id', 'call_id', 'type', 'function', 'custom')) then
        return false;
      end if;
      if (c->'id' is not null and json_typeof(c->'id') <> 'string')
         or (c->'call_id' is not null and json_typeof(c->'call_id') <> 'string')
         or (c->'type' is not null and json_typeof(c->'type') <> 'string') then
        return false;
      end if;
      if c->'function' is not null then
        if json_typeof(c->'function') <> 'object'
           or exists (select 1 from json_object_keys(c->'function') k group by k having count(*) > 1)
           or exists (select 1 from json_object_keys(c->'function') k where k not in ('name', 'arguments'))
           or json_typeof(c->'function'->'name') is distinct from 'string'
           or json_typeof(c->'function'->'arguments') is distinct from 'string' or (c->'function'->>'arguments') <> '{}' then
          return false;
        end if;
      end if;
      if c->'custom' is not null then
        if json_typeof(c->'custom') <> 'object' then return false; end if;
        if exists (select 1 from json_object_keys(c->'custom') k group by k having count(*) > 1)
           or exists (select 1 from json_object_keys(c->'custom') k where k not in ('name', 'input'))
           or json_typeof(c->'custom'->'name') is distinct from 'string'
           or json_typeof(c->'custom'->'input') is distinct from 'string' or (c->'custom'->>'input') <> '[redacted]' then
          return false;
        end if;
      end if;
    end loop;
  end if;
  return true;
end
$fn$;
