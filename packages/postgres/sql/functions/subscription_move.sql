-- The compare-and-set of a consumer (docs/subscriptions.md): moves the checkpoint (p_tenant, p_name)
-- from (p_from_tx_id, p_from_global_position), the one the consumer read, to (p_to_tx_id,
-- p_to_global_position), adds p_delivered and clears last_error. False, changing nothing, when the row
-- is not at that checkpoint, does not exist, or belongs to a tenant the caller may not act for
-- (caller_may_access): another tenant's checkpoint answers exactly like a missing one.
create function turnlog.subscription_move(p_tenant text, p_name text, p_from_tx_id xid8, p_from_global_position bigint,
                                          p_to_tx_id xid8, p_to_global_position bigint, p_delivered bigint)
returns boolean language plpgsql security definer
set search_path = pg_catalog, pg_temp as $fn$
begin
  if not turnlog.caller_may_access(p_tenant) then
    return false;
  end if;
  update turnlog.subscriptions s
     set tx_id = p_to_tx_id, global_position = p_to_global_position, delivered = s.delivered + p_delivered,
         updated_at = pg_catalog.now(), last_error = null
   where s.name = p_name and s.tenant_id is not distinct from p_tenant
     and s.tx_id = p_from_tx_id and s.global_position = p_from_global_position;
  return found;
end
$fn$;
