-- Sets the checkpoint (p_tenant, p_name) to (p_tx_id, p_global_position), whatever it was, and clears
-- last_error: rebaseSubscription and rebaseAfterRestore, under the name's advisory lock (no consumer
-- runs). Returns the checkpoint it replaced (the row locked first), or no row when there is no such
-- row the caller may act for (caller_may_access; another tenant's answers like a missing one).
create function turnlog.subscription_rebase(p_tenant text, p_name text, p_tx_id xid8, p_global_position bigint)
returns table (from_tx_id xid8, from_global_position bigint) language plpgsql security definer
set search_path = pg_catalog, pg_temp as $fn$
begin
  if not turnlog.caller_may_access(p_tenant) then
    return;
  end if;
  select s.tx_id, s.global_position into from_tx_id, from_global_position from turnlog.subscriptions s
   where s.name = p_name and s.tenant_id is not distinct from p_tenant for update;
  if not found then
    return;
  end if;
  update turnlog.subscriptions s set tx_id = p_tx_id, global_position = p_global_position, updated_at = pg_catalog.now(),
         last_error = null
   where s.name = p_name and s.tenant_id is not distinct from p_tenant;
  return next;
end
$fn$;
