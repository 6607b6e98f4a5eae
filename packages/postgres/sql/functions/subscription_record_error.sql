-- Records the error that stopped the consumer of the checkpoint (p_tenant, p_name) in last_error. False
-- when there is no such row the caller may act for (caller_may_access; another tenant's answers like a
-- missing one).
create function turnlog.subscription_record_error(p_tenant text, p_name text, p_error json)
returns boolean language plpgsql security definer
set search_path = pg_catalog, pg_temp as $fn$
begin
  if not turnlog.caller_may_access(p_tenant) then
    return false;
  end if;
  update turnlog.subscriptions s set last_error = p_error, updated_at = pg_catalog.now()
   where s.name = p_name and s.tenant_id is not distinct from p_tenant;
  return found;
end
$fn$;
