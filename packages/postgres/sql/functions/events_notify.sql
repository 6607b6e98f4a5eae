-- Wake-ups: one notification per inserting statement, delivered at commit (identical payloads in one
-- transaction are folded into one). Every writer path notifies, including raw SQL. Listeners re-read the
-- log; the payload carries nothing. NOTIFY serialises committing transactions on a cluster-wide queue
-- lock (measured: it halves the commit rate of 8 concurrent writers), so writers notify only while some
-- consumer holds a live listening lease (turnlog.subscriptions.listening_until); with none, appends pay
-- one lookup in this small table. Set turnlog.notify = 'off' (per role or database) to never notify;
-- subscribers then rely on polling. SECURITY DEFINER (since 0005): a tenant's insert must see the
-- leases of every tenant's consumers, which the row policy of subscriptions hides from it.
create function turnlog.events_notify() returns trigger language plpgsql security definer
set search_path = pg_catalog, pg_temp as $fn$
begin
  if coalesce(pg_catalog.current_setting('turnlog.notify', true), '') <> 'off'
     and exists (select 1 from turnlog.subscriptions s where s.listening_until > pg_catalog.now()) then
    perform pg_catalog.pg_notify('turnlog_events', '');
  end if;
  return null;
end
$fn$;
