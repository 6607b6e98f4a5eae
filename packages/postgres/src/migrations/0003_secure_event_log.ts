import { sql, type Kysely } from 'kysely'

/**
 * 0003: least privilege, tenant isolation and redaction.
 *
 * - Group roles (NOLOGIN, cluster-wide, created only when missing, and only when the migrating role may;
 *   otherwise 42501 naming the roles step: see `rolesSql`): `turnlog_owner` owns the schema and
 *   every object in it; `turnlog_writer` may read, append and call the store's functions but never
 *   UPDATE or DELETE the log (`events`, `conflicts`); `turnlog_reader` may only read.
 * - Row level security on `sessions`, `events`, `live_messages`, `conflicts`: a role sees the sessions of
 *   the tenant `turnlog.tenant_roles` maps it to (by `current_user`), and an unmapped role sees only the
 *   sessions without a tenant. The owner, superusers and BYPASSRLS roles see everything.
 * - Trigger and projection functions run as the owner (SECURITY DEFINER, fixed `search_path`), so the
 *   writer needs no privilege on `live_messages` beyond SELECT. The SECURITY DEFINER entry points
 *   (`rebuild_session`, `redact_message`) check the caller's tenant themselves.
 * - Redaction: `events.payload_digest` keeps the SHA-256 of a scrubbed payload's original text, so the
 *   chain still verifies; `turnlog.redact_message` is the one path that scrubs.
 *
 * Released migrations are never edited; later changes get new files. See docs/security.md.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql.raw(SQL).execute(db)
}

/** Not reversible: dropping the policies would silently widen every role's access. */
export async function down(): Promise<void> {
  throw new Error('0003_secure_event_log cannot be reverted')
}

const SQL = String.raw`
-- The roles step. Roles are cluster-wide and several databases may migrate at once: create each only
-- when missing (and only when this role may: superuser or CREATEROLE), tolerating losing the race. A
-- role that may not create them gets 42501 with a JSON detail {"step":"roles",...} and a hint: a DBA
-- runs the SQL of "turnlog migrate --roles-sql" (rolesSql(), roles-sql.ts) once, and this step then only
-- checks. Nothing of the migration is left behind (one transaction).
do $do$
declare
  r text;
  v_missing text[] := '{}';
  v_can_create boolean;
begin
  select r0.rolsuper or r0.rolcreaterole into v_can_create from pg_catalog.pg_roles r0 where r0.rolname = current_user;
  foreach r in array array['turnlog_owner', 'turnlog_writer', 'turnlog_reader'] loop
    if not exists (select 1 from pg_catalog.pg_roles where rolname = r) then
      if v_can_create then
        begin
          execute format('create role %I nologin', r);
        exception when duplicate_object or unique_violation then
          null;
        end;
      else
        v_missing := v_missing || r;
      end if;
    end if;
  end loop;
  if cardinality(v_missing) > 0 then
    raise exception 'turnlog roles step: the cluster roles % do not exist, and role % may not create them (CREATE ROLE needs CREATEROLE)',
        array_to_string(v_missing, ', '), current_user
      using errcode = '42501',
            detail = json_build_object('step', 'roles', 'missing', v_missing, 'role', current_user)::text,
            hint = 'have a DBA run the SQL printed by "turnlog migrate --roles-sql" once (as a superuser or a CREATEROLE role), then migrate again';
  end if;
  -- the role running migrations must be able to act as the owner (it alters owner-owned objects later)
  if not pg_catalog.pg_has_role(current_user, 'turnlog_owner', 'MEMBER') then
    begin
      execute format('grant turnlog_owner to %I', current_user);
    exception when insufficient_privilege then
      raise exception 'turnlog roles step: role % is not a member of turnlog_owner and may not grant it to itself', current_user
        using errcode = '42501',
              detail = json_build_object('step', 'roles', 'missing', '{}'::text[], 'role', current_user, 'needs', 'grant turnlog_owner')::text,
              hint = 'have a DBA run the SQL printed by "turnlog migrate --roles-sql" once (it grants turnlog_owner to the migrating login), then migrate again';
    end;
  end if;
end
$do$;

-- Which database role acts for which tenant. Maintained by the operator (as the owner); a role reads
-- only its own row.
create table turnlog.tenant_roles (
  role_name text primary key,
  tenant_id text not null,
  created_at timestamptz not null default now()
);

-- SHA-256 of the original payload text of an event scrubbed by a redaction (the chain covers it).
alter table turnlog.events add column payload_digest bytea;

-- The role the caller acts as. Inside a SECURITY DEFINER function current_user is the owner; the role
-- GUC still holds the caller's SET ROLE, and session_user is the login otherwise.
create function turnlog.caller_role() returns text language sql stable
set search_path = pg_catalog, pg_temp as $fn$
  select case when current_setting('role') = 'none' then session_user::text else current_setting('role') end
$fn$;

-- True when the caller may act on sessions of tenant p_tenant: the same rule as the row policies, for
-- SECURITY DEFINER functions (which bypass them).
create function turnlog.caller_may_access(p_tenant text) returns boolean language plpgsql stable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_role text := turnlog.caller_role();
  v_tenant text;
begin
  if exists (select 1 from pg_catalog.pg_roles r where r.rolname = v_role and (r.rolsuper or r.rolbypassrls))
     or pg_catalog.pg_has_role(v_role, 'turnlog_owner', 'USAGE') then
    return true;
  end if;
  select t.tenant_id into v_tenant from turnlog.tenant_roles t where t.role_name = v_role;
  return p_tenant is not distinct from v_tenant;
end
$fn$;

-- The session's tenant when the caller may act on it; raises TLS01 (exactly like an unknown session) otherwise.
create function turnlog.accessible_session_tenant(p_session uuid) returns text language plpgsql stable
set search_path = pg_catalog, pg_temp as $fn$
declare
  v_tenant text;
begin
  select s.tenant_id into v_tenant from turnlog.sessions s where s.session_id = p_session;
  if not found or not turnlog.caller_may_access(v_tenant) then
    raise exception 'session % not found', p_session using errcode = 'TLS01';
  end if;
  return v_tenant;
end
$fn$;

-- rebuild_session deletes projection rows: it runs as the owner, after a tenant check. The original
-- body is kept under another name (so later changes to it need no change here).
alter function turnlog.rebuild_session(uuid) rename to rebuild_session_unchecked;
create function turnlog.rebuild_session(p_session uuid) returns void language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
begin
  perform turnlog.accessible_session_tenant(p_session);
  perform turnlog.rebuild_session_unchecked(p_session);
end
$fn$;

-- A copy of a placeholder that JSON operators accept: the escapes they refuse (\u0000 and every
-- surrogate half) become \u003f. Used only to check a placeholder's shape; the placeholder stored is
-- the original text. (Pairing ids are kept in placeholders and may hold such characters.)
create function turnlog.json_operable(p json) returns json language sql immutable
set search_path = pg_catalog, pg_temp as $fn$
  select regexp_replace(p::text, '\\u(0000|[dD][89a-fA-F][0-9a-fA-F]{2})', '\\u003f', 'g')::json
$fn$;

-- True for exactly the payloads redactedPayload() (core) makes: { role, content: '[redacted]' } plus the
-- ids tool-call pairing needs. Nothing else may replace a payload.
create function turnlog.is_redaction_placeholder(p json) returns boolean language plpgsql immutable
set search_path = pg_catalog, pg_temp as $fn$
declare
  c json;
begin
  if json_typeof(p) is distinct from 'object' then return false; end if;
  if exists (select 1 from json_object_keys(p) k group by k having count(*) > 1)
     or exists (select 1 from json_object_keys(p) k where k not in ('role', 'content', 'tool_call_id', 'call_id', 'tool_calls')) then
    return false;
  end if;
  if (p->>'role') is null or (p->>'role') not in ('system', 'developer', 'user', 'assistant', 'tool')
     or json_typeof(p->'content') is distinct from 'string' or (p->>'content') <> '[redacted]' then
    return false;
  end if;
  if (p->'tool_call_id' is not null and json_typeof(p->'tool_call_id') <> 'string')
     or (p->'call_id' is not null and json_typeof(p->'call_id') <> 'string') then
    return false;
  end if;
  if p->'tool_calls' is not null then
    if json_typeof(p->'tool_calls') <> 'array' then return false; end if;
    for c in select value from json_array_elements(p->'tool_calls') loop
      if json_typeof(c) <> 'object' then return false; end if;
      if exists (select 1 from json_object_keys(c) k group by k having count(*) > 1)
         or exists (select 1 from json_object_keys(c) k where k not in ('id', 'call_id', 'type', 'function')) then
        return false;
      end if;
      if c->'function' is not null then
        if json_typeof(c->'function') <> 'object'
           or exists (select 1 from json_object_keys(c->'function') k group by k having count(*) > 1)
           or exists (select 1 from json_object_keys(c->'function') k where k not in ('name', 'arguments'))
           or json_typeof(c->'function'->'arguments') is distinct from 'string' or (c->'function'->>'arguments') <> '{}' then
          return false;
        end if;
      end if;
    end loop;
  end if;
  return true;
end
$fn$;

-- The one privileged path that scrubs content (GDPR erasure). Scrubs every content event of message
-- p_message in every session of p_session's tenant that holds it (the session, its forks, their
-- parents: copies of a message are the same message), and the payloads of its recorded conflicts in the
-- tenant. Each
-- scrubbed payload is replaced by its placeholder (p_targets: [{sessionId, seq}] and p_placeholders, the
-- placeholders in the same order, made by the client, checked here) and its original text's SHA-256 goes to payload_digest; id, seq, content
-- hash and chain link stay. Appends one message_redacted event to every session scrubbed, whose data
-- lists the scrubbed seqs and digests (chained: a scrub no redaction event records does not verify).
-- p_conflicts: [{sessionId, conflictId}] with p_conflict_placeholders; p_event_ids: {sessionId: eventId};
-- p_reason: a JSON string or null. Raises TLS01 (no such session for the caller), TLU01 (the message
-- is not in the session), 40001 (targets changed since the client read them: retry), 22023 (a
-- placeholder is not one).
create function turnlog.redact_message(p_session uuid, p_message uuid, p_targets json, p_placeholders json,
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

  -- every session of the tenant that holds the message, locked in id order (no deadlock between redactions)
  select array_agg(x.session_id order by x.session_id) into v_scope from (
    select s.session_id from turnlog.sessions s
     where s.tenant_id is not distinct from v_tenant
       and s.session_id in (select e.session_id from turnlog.events e where e.message_id = p_message)
     order by s.session_id for update of s) x;
  if not (p_session = any (coalesce(v_scope, '{}'))) then
    raise exception 'message % is not in session %', p_message, p_session using errcode = 'TLU01';
  end if;

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
  -- placeholders travel in their own arrays (aligned with the targets): only json_array_elements, which
  -- does not de-escape, touches them, and their shape is checked on an operable copy
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
           string_agg('{"seq":' || e.seq::text || ',"payloadDigest":"' || encode(e.payload_digest, 'hex') || '"}', ',' order by e.seq) as list
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

-- An event inserted already scrubbed (an import of an export taken after a redaction): its link covers
-- the recorded digest, not the placeholder, exactly as before the scrub. Runs after events_link (BEFORE
-- triggers fire in name order), only for such rows (the WHEN clause keeps it off the append path).
create function turnlog.events_link_scrubbed() returns trigger language plpgsql
security definer set search_path = pg_catalog, pg_temp as $fn$
declare
  prev bytea;
begin
  if new.seq = 1 then
    prev := '\x0000000000000000000000000000000000000000000000000000000000000000'::bytea;
  else
    select e.hash into prev from turnlog.events e where e.session_id = new.session_id and e.seq = new.seq - 1;
  end if;
  new.hash := sha256(
    prev
    || convert_to(new.session_id::text || E'
' || new.seq::text || E'
' || new.event_id::text || E'
' || new.type || E'
'
       || coalesce(new.message_id::text, '') || E'
' || coalesce(encode(new.content_hash, 'hex'), '') || E'
', 'UTF8')
    || sha256(convert_to(new.data::text, 'UTF8'))
    || new.payload_digest);
  return new;
end
$fn$;
create trigger events_link_scrubbed before insert on turnlog.events
  for each row when (new.payload_digest is not null) execute function turnlog.events_link_scrubbed();

-- Trigger and projection functions run as the owner with a fixed search_path: the writer needs no
-- privilege on live_messages (projection) nor anything the chain link reads.
alter function turnlog.events_link() security definer set search_path = pg_catalog, pg_temp;
alter function turnlog.events_project() security definer set search_path = pg_catalog, pg_temp;
alter function turnlog.events_check_order() security definer set search_path = pg_catalog, pg_temp;
alter function turnlog.project_event(turnlog.events) set search_path = pg_catalog, pg_temp;
alter function turnlog.rebuild_session_unchecked(uuid) set search_path = pg_catalog, pg_temp;

-- Row level security. Policies name tables only through sessions, whose own policy holds the tenant
-- rule, so the rule is written once. The tenant of current_user is an InitPlan: one lookup per statement.
-- The child tables' rule is a correlated scalar subquery on purpose: one primary-key probe of sessions
-- per row. An EXISTS would be turned into a hashed subplan over every session of the tenant (cost
-- proportional to the tenant's size on every statement) and would hide the message_id index.
alter table turnlog.tenant_roles enable row level security;
create policy tenant_roles_own on turnlog.tenant_roles for select using (role_name = current_user);

alter table turnlog.sessions enable row level security;
create policy sessions_tenant on turnlog.sessions
  using (tenant_id is not distinct from (select r.tenant_id from turnlog.tenant_roles r where r.role_name = current_user));

alter table turnlog.events enable row level security;
create policy events_tenant on turnlog.events
  using ((select true from turnlog.sessions s where s.session_id = events.session_id));

alter table turnlog.live_messages enable row level security;
create policy live_messages_tenant on turnlog.live_messages
  using ((select true from turnlog.sessions s where s.session_id = live_messages.session_id));

alter table turnlog.conflicts enable row level security;
create policy conflicts_tenant on turnlog.conflicts
  using ((select true from turnlog.sessions s where s.session_id = conflicts.session_id));

-- Ownership: the schema and everything in it (tables of earlier migrations included) belong to the owner.
alter schema turnlog owner to turnlog_owner;
do $do$
declare
  r record;
begin
  for r in select c.oid::regclass::text as name, c.relkind from pg_catalog.pg_class c
            where c.relnamespace = 'turnlog'::regnamespace and c.relkind in ('r', 'p', 'v', 'm')
  loop
    execute format(case r.relkind when 'v' then 'alter view %s owner to turnlog_owner'
                                  when 'm' then 'alter materialized view %s owner to turnlog_owner'
                                  else 'alter table %s owner to turnlog_owner' end, r.name);
  end loop;
  for r in select c.oid::regclass::text as name from pg_catalog.pg_class c
            where c.relnamespace = 'turnlog'::regnamespace and c.relkind = 'S'
              and not exists (select 1 from pg_catalog.pg_depend d where d.objid = c.oid and d.deptype in ('a', 'i'))
  loop
    execute format('alter sequence %s owner to turnlog_owner', r.name);
  end loop;
  for r in select p.oid::regprocedure::text as sig from pg_catalog.pg_proc p where p.pronamespace = 'turnlog'::regnamespace
  loop
    execute format('alter routine %s owner to turnlog_owner', r.sig);
  end loop;
  for r in select t.oid::regtype::text as name from pg_catalog.pg_type t
            where t.typnamespace = 'turnlog'::regnamespace
              and (t.typtype in ('e', 'd', 'r')
                   or (t.typtype = 'c' and exists (select 1 from pg_catalog.pg_class c where c.oid = t.typrelid and c.relkind = 'c')))
  loop
    execute format('alter type %s owner to turnlog_owner', r.name);
  end loop;
end
$do$;

-- Privileges. Nothing for PUBLIC; the writer appends, never rewrites.
revoke all on schema turnlog from public;
grant usage on schema turnlog to turnlog_writer, turnlog_reader;
revoke all on turnlog.sessions, turnlog.events, turnlog.live_messages, turnlog.conflicts, turnlog.tenant_roles from public;
grant select on turnlog.sessions, turnlog.events, turnlog.live_messages, turnlog.conflicts, turnlog.tenant_roles
  to turnlog_writer, turnlog_reader;
-- openStore checks for pending migrations (reads only; applying them needs the owner)
grant select on turnlog.schema_migrations, turnlog.schema_migrations_lock to turnlog_writer, turnlog_reader;
grant insert on turnlog.sessions, turnlog.conflicts to turnlog_writer;
-- not hash (the trigger computes it), tx_id (commit order for subscriptions), payload_digest (redaction only)
grant insert (session_id, seq, event_id, type, message_id, content_hash, payload, data, recorded_at) on turnlog.events to turnlog_writer;
-- subscription checkpoints are consumer state, not the log: consumers move them (0002)
revoke all on turnlog.subscriptions from public;
grant select on turnlog.subscriptions to turnlog_reader;
grant select, insert, update, delete on turnlog.subscriptions to turnlog_writer;
-- the session row is the append lock (SELECT … FOR UPDATE needs an UPDATE privilege) and holds the version
grant update (version, updated_at) on turnlog.sessions to turnlog_writer;

do $do$
declare
  r record;
begin
  -- internal functions: owner only
  for r in select p.oid::regprocedure::text as sig from pg_catalog.pg_proc p
            where p.pronamespace = 'turnlog'::regnamespace
              and p.proname in ('events_link', 'events_link_scrubbed', 'events_project', 'events_check_order', 'project_event', 'rebuild_session_unchecked',
                                'caller_role', 'caller_may_access', 'accessible_session_tenant',
                                'append_messages', 'rebuild_session', 'redact_message')
  loop
    execute format('revoke all on function %s from public', r.sig);
  end loop;
  -- the store's entry points: the writer
  for r in select p.oid::regprocedure::text as sig from pg_catalog.pg_proc p
            where p.pronamespace = 'turnlog'::regnamespace and p.proname in ('append_messages', 'rebuild_session', 'redact_message')
  loop
    execute format('grant execute on function %s to turnlog_writer', r.sig);
  end loop;
end
$do$;
`
