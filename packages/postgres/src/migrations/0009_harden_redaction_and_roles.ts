import { sql, type Kysely } from 'kysely'

/**
 * 0009: the tenant binding as a boundary, redaction that reaches every copy, scrubs the chain commits to.
 *
 * - Tenant binding by login: row level security and the `SECURITY DEFINER` entry points decide the
 *   caller's tenant by `turnlog.bound_tenant(current_user)`: the tenant of the *login* (`session_user`)
 *   when the login is mapped in `turnlog.tenant_roles`, whatever role it switched to with `SET ROLE`;
 *   otherwise the tenant of the role in effect, when the login may act as it. A tenant login that is a
 *   member of `turnlog_writer` can no longer `SET ROLE turnlog_writer` to leave its tenant (0003 looked
 *   up `current_user`, so the switch made it an unmapped role, which sees the sessions without a
 *   tenant). A mapping of a role that is a superuser, `BYPASSRLS` or a member of `turnlog_owner` is
 *   refused: those roles pass every policy, so they cannot be bound to a tenant.
 * - Redaction covers forks taken concurrently: `turnlog.lock_message_sessions` locks every session of
 *   the tenant that holds the message, re-reading after each round of locks until a read taken while
 *   holding them all finds no other (a fork locks its parent, a holder, before copying it; so a copy
 *   committed before the last read is seen, and one not yet made waits and copies the placeholder).
 *   The store calls it before reading the targets; `redact_message` calls it too.
 * - The chain commits to the placeholder: each scrub record of a `message_redacted` event now also
 *   carries the original `contentHash` and `placeholderDigest`, the SHA-256 of the placeholder text
 *   stored (`turnlog.placeholder_digest`, the same function as core's `placeholderDigest`). The scrubbed
 *   event's own link covers the original (its `payload_digest`); the record, chained in a later event,
 *   covers what replaced it (role, pairing ids), so rewriting a placeholder breaks verification.
 *
 * Released migrations are never edited; later changes get new files. See docs/security.md.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(SQL).execute(db)
}

/** Not reversible: reverting would reopen the tenant escape. */
export async function down(): Promise<void> {
  throw new Error('0009_harden_redaction_and_roles cannot be reverted')
}

const SQL = String.raw`
-- The tenant the caller acts for: the login's (session_user) when the login is mapped, else the one of
-- p_role (the role in effect) when the login may act as it (it is that role, a member of it, or a
-- superuser), else null (the sessions without a tenant). SECURITY DEFINER: it reads every row of
-- tenant_roles, whose policy shows a role only its own row.
create function turnlog.bound_tenant(p_role name) returns text language sql stable security definer
set search_path = pg_catalog, pg_temp as $fn$
  select coalesce(
    (select t.tenant_id from turnlog.tenant_roles t where t.role_name = session_user::text),
    (select t.tenant_id from turnlog.tenant_roles t
      where t.role_name = p_role::text and pg_catalog.pg_has_role(session_user, p_role, 'MEMBER')))
$fn$;

alter policy sessions_tenant on turnlog.sessions
  using (tenant_id is not distinct from (select turnlog.bound_tenant(current_user)));
alter policy tenant_roles_own on turnlog.tenant_roles
  using (role_name = current_user::text or role_name = session_user::text);

-- The same rule for the SECURITY DEFINER entry points (they run as the owner and bypass the policies).
create or replace function turnlog.caller_may_access(p_tenant text) returns boolean language plpgsql stable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_role text := turnlog.caller_role();
begin
  if exists (select 1 from pg_catalog.pg_roles r where r.rolname = v_role and (r.rolsuper or r.rolbypassrls))
     or pg_catalog.pg_has_role(v_role, 'turnlog_owner', 'USAGE') then
    return true;
  end if;
  return p_tenant is not distinct from turnlog.bound_tenant(v_role::name);
end
$fn$;

-- A role that passes every policy cannot be bound to a tenant.
create function turnlog.tenant_roles_check() returns trigger language plpgsql
set search_path = pg_catalog, pg_temp as $fn$
begin
  if exists (select 1 from pg_catalog.pg_roles r
              where r.rolname = new.role_name
                and (r.rolsuper or r.rolbypassrls or pg_catalog.pg_has_role(r.oid, 'turnlog_owner', 'MEMBER'))) then
    raise exception 'role % passes every row policy (superuser, BYPASSRLS or a member of turnlog_owner): it cannot be bound to a tenant', new.role_name
      using errcode = '42501',
            hint = 'map a login that is a member of turnlog_writer or turnlog_reader only (docs/security.md)';
  end if;
  return new;
end
$fn$;
create trigger tenant_roles_check before insert or update on turnlog.tenant_roles
  for each row execute function turnlog.tenant_roles_check();

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

-- The SHA-256 of a placeholder's stored text: what a scrub record's placeholderDigest holds.
-- Core's placeholderDigest() computes the same over JSON.stringify of the parsed placeholder (a test
-- pins both to one vector).
create function turnlog.placeholder_digest(p json) returns bytea language sql immutable
set search_path = pg_catalog, pg_temp as $fn$
  select sha256(convert_to(p::text, 'UTF8'))
$fn$;

-- 0003's redact_message with two changes: its scope is turnlog.lock_message_sessions (every holder,
-- forks made concurrently included), and each scrub record commits to the original content hash and
-- to the placeholder that replaced the payload: {"seq","contentHash","payloadDigest","placeholderDigest"}.
create or replace function turnlog.redact_message(p_session uuid, p_message uuid, p_targets json, p_placeholders json,
  p_conflicts json, p_conflict_placeholders json, p_event_ids json, p_reason json)
returns table (session_id uuid, version bigint, scrubbed int)
language plpgsql security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  v_tenant text := turnlog.accessible_session_tenant(p_session);
  v_scope uuid[];
  v_reason text;
  v_sessions uuid[];
  v_counts int[];
begin
  if p_reason is not null and json_typeof(p_reason) <> 'string' then
    raise exception 'reason must be a JSON string' using errcode = '22023';
  end if;
  v_reason := case when p_reason is null then '' else '"reason":' || p_reason::text || ',' end;

  v_scope := turnlog.lock_message_sessions(p_session, p_message);
  if not exists (select 1 from turnlog.events e where e.session_id = p_session and e.message_id = p_message) then
    raise exception 'message % is not in session %', p_message, p_session using errcode = 'TLU01';
  end if;
  select array_agg(s.session_id order by s.session_id) into v_scope from turnlog.sessions s
   where s.session_id = any (v_scope)
     and exists (select 1 from turnlog.events e where e.session_id = s.session_id and e.message_id = p_message);

  -- the client's targets must be exactly the unscrubbed content events of the message in scope
  -- (a fork copy of a placeholder, data.redacted, was never content)
  if exists (
       (select e.session_id, e.seq from turnlog.events e
         where e.session_id = any (v_scope) and e.message_id = p_message and e.content_hash is not null
           and e.payload_digest is null and (e.data->>'redacted') is null
        except select (t->>'sessionId')::uuid, (t->>'seq')::bigint from json_array_elements(p_targets) t)
       union all
       (select (t->>'sessionId')::uuid, (t->>'seq')::bigint from json_array_elements(p_targets) t
        except select e.session_id, e.seq from turnlog.events e
         where e.session_id = any (v_scope) and e.message_id = p_message and e.content_hash is not null
           and e.payload_digest is null and (e.data->>'redacted') is null)) then
    raise exception 'the events of message % changed since they were read; retry', p_message using errcode = '40001';
  end if;
  if exists (
       (select c.session_id, c.conflict_id from turnlog.conflicts c
         where c.message_id = p_message
           and c.session_id in (select s.session_id from turnlog.sessions s where s.tenant_id is not distinct from v_tenant)
        except select (x->>'sessionId')::uuid, (x->>'conflictId')::uuid from json_array_elements(p_conflicts) x)
       union all
       (select (x->>'sessionId')::uuid, (x->>'conflictId')::uuid from json_array_elements(p_conflicts) x
        except select c.session_id, c.conflict_id from turnlog.conflicts c
         where c.message_id = p_message
           and c.session_id in (select s.session_id from turnlog.sessions s where s.tenant_id is not distinct from v_tenant))) then
    raise exception 'the conflicts of message % changed since they were read; retry', p_message using errcode = '40001';
  end if;
  if json_array_length(p_placeholders) <> json_array_length(p_targets)
     or json_array_length(p_conflict_placeholders) <> json_array_length(p_conflicts)
     or exists (select 1 from json_array_elements(p_placeholders) ph where not turnlog.is_redaction_placeholder(turnlog.json_operable(ph)))
     or exists (select 1 from json_array_elements(p_conflict_placeholders) ph where not turnlog.is_redaction_placeholder(turnlog.json_operable(ph))) then
    raise exception 'a redaction placeholder must be { role, content: ''[redacted]'' } plus pairing ids' using errcode = '22023';
  end if;

  update turnlog.conflicts c set incoming_payload = x.ph
    from rows from (json_array_elements(p_conflicts), json_array_elements(p_conflict_placeholders)) as x(k, ph)
   where c.session_id = (x.k->>'sessionId')::uuid and c.conflict_id = (x.k->>'conflictId')::uuid;

  -- the right-hand side sees the old row: the digest is of the text being replaced
  update turnlog.events e
     set payload = t.ph, payload_digest = sha256(convert_to(e.payload::text, 'UTF8'))
    from rows from (json_array_elements(p_targets), json_array_elements(p_placeholders)) as t(k, ph)
   where e.session_id = (t.k->>'sessionId')::uuid and e.seq = (t.k->>'seq')::bigint;

  -- one message_redacted event per session scrubbed; its data text is what JSON.stringify makes of it
  with scrubbed as (
    select e.session_id, count(*)::int as n,
           string_agg('{"seq":' || e.seq::text || ',"contentHash":"' || encode(e.content_hash, 'hex')
                      || '","payloadDigest":"' || encode(e.payload_digest, 'hex')
                      || '","placeholderDigest":"' || encode(turnlog.placeholder_digest(e.payload), 'hex') || '"}', ',' order by e.seq) as list
      from json_array_elements(p_targets) t
      join turnlog.events e on e.session_id = (t->>'sessionId')::uuid and e.seq = (t->>'seq')::bigint
     group by e.session_id
  ), bumped as (
    update turnlog.sessions s set version = s.version + 1, updated_at = now()
      from scrubbed x where s.session_id = x.session_id
    returning s.session_id, s.version, x.n, x.list
  ), written as (
    insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
    select b.session_id, b.version, (p_event_ids->>(b.session_id::text))::uuid, 'message_redacted', p_message, null, null,
           ('{' || v_reason || '"scrubbed":[' || b.list || '],"origin":"' || p_session::text || '"}')::json
      from bumped b
    returning 1
  )
  select array_agg(b.session_id), array_agg(b.n) into v_sessions, v_counts from bumped b;

  return query
    select s.session_id, s.version, coalesce(x.n, 0)
      from turnlog.sessions s
      left join unnest(coalesce(v_sessions, '{}'), coalesce(v_counts, '{}')) as x(session_id, n) on x.session_id = s.session_id
     where s.session_id = any (v_scope)
     order by s.session_id;
end
$fn$;

alter function turnlog.bound_tenant(name) owner to turnlog_owner;
alter function turnlog.tenant_roles_check() owner to turnlog_owner;
alter function turnlog.lock_message_sessions(uuid, uuid) owner to turnlog_owner;
alter function turnlog.placeholder_digest(json) owner to turnlog_owner;
revoke all on function turnlog.bound_tenant(name) from public;
revoke all on function turnlog.tenant_roles_check() from public;
revoke all on function turnlog.lock_message_sessions(uuid, uuid) from public;
-- every policy on sessions calls it, as the querying role
grant execute on function turnlog.bound_tenant(name) to turnlog_writer, turnlog_reader;
grant execute on function turnlog.lock_message_sessions(uuid, uuid) to turnlog_writer;
`
