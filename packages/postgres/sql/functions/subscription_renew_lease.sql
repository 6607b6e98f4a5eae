-- Extends the listening lease of the checkpoint (p_tenant, p_name) to now() + p_seconds (writers notify
-- while a lease is live: events_notify). False when there is no such row the caller may act for
-- (caller_may_access; another tenant's answers like a missing one).
create function turnlog.subscription_renew_lease(p_tenant text, p_name text, p_seconds double precision)
returns boolean language plpgsql security definer
set search_path = pg_catalog, pg_temp as $fn$
begin
  if not turnlog.caller_may_access(p_tenant) then
    return false;
  end if;
  update turnlog.subscriptions s set listening_until = pg_catalog.now() + pg_catalog.make_interval(secs => p_seconds)
   where s.name = p_name and s.tenant_id is not distinct from p_tenant;
  return found;
end
$fn$;
