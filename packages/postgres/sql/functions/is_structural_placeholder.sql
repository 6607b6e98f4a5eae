-- True for a structural redaction placeholder (core structuralPlaceholder, the redaction of a message of
-- a format other than openai-chat): every string is '[redacted]' or the value of a key that names a type,
-- a speaker, a tool-call pairing id, a tool name or a call state (core PLACEHOLDER_KEPT_KEYS, the same
-- list), every number is 0; booleans, nulls, arrays and objects are kept. p_key: the key p is the value of
-- (null at the top and in an array). turnlog.is_redaction_placeholder checks that the top level is an object.
create function turnlog.is_structural_placeholder(p json, p_key text) returns boolean language plpgsql immutable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_kind text := json_typeof(p);
begin
  if v_kind = 'string' then
    return (p #>> '{}') = '[redacted]'
      or coalesce(p_key in ('type', 'role', 'id', 'call_id', 'callId', 'toolCallId', 'tool_use_id', 'approval_request_id', 'approvalId',
                   'name', 'toolName', 'state', 'status', 'execution'), false);
  elsif v_kind = 'number' then
    return (p #>> '{}')::numeric = 0;
  elsif v_kind in ('boolean', 'null') then
    return true;
  elsif v_kind = 'array' then
    return not exists (select 1 from json_array_elements(p) v where not coalesce(turnlog.is_structural_placeholder(v, null), false));
  elsif v_kind = 'object' then
    if exists (select 1 from json_object_keys(p) k group by k having count(*) > 1) then return false; end if;
    return not exists (select 1 from json_each(p) e where not coalesce(turnlog.is_structural_placeholder(e.value, e.key), false));
  end if;
  return false;
end
$fn$;
