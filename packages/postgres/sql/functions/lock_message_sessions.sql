-- Locks (FOR UPDATE) p_session and every session of its tenant that holds message p_message, and
-- returns them: after each round of locks it reads again (a new snapshot), until a read taken while
-- holding every lock finds no holder it has not locked. A fork copies a message only while holding its
-- parent's lock, so no copy can appear after that read until the caller's transaction ends. TLS01 when
-- the caller may not act on p_session.
create function turnlog.lock_message_sessions(p_session uuid, p_message uuid) returns uuid[] language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  v_tenant text := turnlog.accessible_session_tenant(p_session);
  v_locked uuid[];
  v_new uuid[];
begin
  perform 1 from turnlog.sessions s where s.session_id = p_session for update;
  v_locked := array[p_session];
  loop
    select array_agg(x.session_id order by x.session_id) into v_new from (
      select s.session_id from turnlog.sessions s
       where s.tenant_id is not distinct from v_tenant
         and s.session_id in (select e.session_id from turnlog.events e where e.message_id = p_message)
         and s.session_id <> all (v_locked)
       order by s.session_id for update of s) x;
    exit when v_new is null;
    v_locked := v_locked || v_new;
  end loop;
  return v_locked;
end
$fn$;
