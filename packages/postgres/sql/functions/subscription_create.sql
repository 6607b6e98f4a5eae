-- Creates the checkpoint (p_tenant, p_name) at (p_tx_id, p_global_position) unless it exists (then it
-- changes nothing). The store names the caller's own tenant (bound_tenant); a tenant the caller may not
-- act for (caller_may_access, the rule of the row policies) is refused with 42501 before anything is
-- read, as an insert of another tenant's session is. SECURITY DEFINER: writers have no write privilege
-- on subscriptions (so they cannot lock it in a mode that blocks consumers).
create function turnlog.subscription_create(p_tenant text, p_name text, p_tx_id xid8, p_global_position bigint)
returns void language plpgsql security definer
set search_path = pg_catalog, pg_temp as $fn$
begin
  if not turnlog.caller_may_access(p_tenant) then
    raise exception 'permission denied for the subscriptions of tenant %', p_tenant using errcode = '42501';
  end if;
  insert into turnlog.subscriptions (name, tenant_id, tx_id, global_position)
  values (p_name, p_tenant, p_tx_id, p_global_position)
  on conflict do nothing;
end
$fn$;
