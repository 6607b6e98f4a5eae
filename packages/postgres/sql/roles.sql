-- The roles step. turnlog_owner owns the schema and every object in it; turnlog_writer may read, append
-- and call the store's functions but never UPDATE or DELETE the log (events, conflicts); turnlog_reader
-- may only read (docs/security.md). Roles are cluster-wide and several databases may migrate at once:
-- create each only when missing (and only when this role may: superuser or CREATEROLE), tolerating
-- losing the race. A role that may not create them gets 42501 with a JSON detail {"step":"roles",...}
-- and a hint: a DBA runs the SQL of "turnlog migrate --roles-sql" (rolesSql(), roles-sql.ts) once, and
-- this step then only checks. Nothing of the migration is left behind (one transaction).
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
