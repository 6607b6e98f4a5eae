-- Deletes the checkpoint (p_tenant, p_name). False when there is no such row the caller may act for
-- (caller_may_access; another tenant's answers like a missing one). The store holds the name's advisory
-- lock first (no consumer runs).
create function turnlog.subscription_drop(p_tenant text, p_name text)
returns boolean language plpgsql security definer
set search_path = pg_catalog, pg_temp as $fn$
begin
  if not turnlog.caller_may_access(p_tenant) then
    return false;
  end if;
  delete from turnlog.subscriptions s where s.name = p_name and s.tenant_id is not distinct from p_tenant;
  return found;
end
$fn$;
