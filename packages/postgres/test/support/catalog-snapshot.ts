import type pg from 'pg'

/** The cluster roles the schema is built on (the test server may hold other roles). */
const ROLES = "'turnlog_owner', 'turnlog_writer', 'turnlog_reader'"

/**
 * The shape of the `turnlog` schema as `pg_catalog` holds it, one self-contained line per fact, sorted:
 * the schema, relations (kind, owner, row level security, ACL), columns (position, type, default,
 * nullability, identity, column ACL), constraints, indexes, functions (signature, result, language,
 * volatility, security definer, strictness, parallel safety, settings, owner, ACL, md5 of the body),
 * triggers, policies, types and the `turnlog_*` roles with their memberships among themselves.
 * ACL items are sorted (their order carries no meaning). Object ids never appear.
 */
export async function catalogSnapshot(client: pg.ClientBase): Promise<string> {
  const lines: string[] = []
  const q = async (text: string): Promise<Record<string, unknown>[]> => (await client.query(text)).rows as Record<string, unknown>[]
  const acl = (expr: string): string => `coalesce((select string_agg(a::text, ' ' order by a::text) from unnest(${expr}) a), 'default')`

  for (const r of await q(`select 'schema turnlog owner=' || pg_get_userbyid(n.nspowner) || ' acl=' || ${acl('n.nspacl')} as line
                             from pg_namespace n where n.nspname = 'turnlog'`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'relation ' || c.relname || ' kind=' || c.relkind::text || ' owner=' || pg_get_userbyid(c.relowner)
           || ' rls=' || c.relrowsecurity || ' force_rls=' || c.relforcerowsecurity || ' persistence=' || c.relpersistence::text
           || ' acl=' || ${acl('c.relacl')} as line
      from pg_class c where c.relnamespace = 'turnlog'::regnamespace`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'column ' || c.relname || '.' || lpad(a.attnum::text, 2, '0') || ' ' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
           || case when a.attnotnull then ' not null' else ' null' end
           || coalesce(' default ' || pg_get_expr(d.adbin, d.adrelid), '')
           || case a.attidentity when 'a' then ' identity always' when 'd' then ' identity by default' else '' end
           || case a.attgenerated when 's' then ' generated stored' else '' end
           || coalesce(' collation ' || nullif(co.collname, 'default'), '')
           || ' acl=' || ${acl('a.attacl')} as line
      from pg_attribute a
      join pg_class c on c.oid = a.attrelid
      left join pg_attrdef d on d.adrelid = a.attrelid and d.adnum = a.attnum
      left join pg_collation co on co.oid = a.attcollation and a.attcollation <> 0
     where c.relnamespace = 'turnlog'::regnamespace and c.relkind in ('r', 'p', 'v', 'm', 'c', 'f')
       and a.attnum > 0 and not a.attisdropped`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'constraint ' || coalesce(c.relname, t.typname) || '.' || k.conname || ' ' || k.contype::text || ' ' || pg_get_constraintdef(k.oid)
           || ' deferrable=' || k.condeferrable as line
      from pg_constraint k
      left join pg_class c on c.oid = k.conrelid
      left join pg_type t on t.oid = k.contypid
     where k.connamespace = 'turnlog'::regnamespace`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'index ' || i.relname || ' ' || pg_get_indexdef(x.indexrelid) as line
      from pg_index x join pg_class i on i.oid = x.indexrelid
     where i.relnamespace = 'turnlog'::regnamespace`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'function ' || p.oid::regprocedure::text || ' returns ' || coalesce(pg_get_function_result(p.oid), '-')
           || ' kind=' || p.prokind::text || ' language=' || l.lanname || ' volatility=' || p.provolatile::text
           || ' security_definer=' || p.prosecdef || ' strict=' || p.proisstrict || ' parallel=' || p.proparallel::text
           || ' leakproof=' || p.proleakproof || ' config=' || coalesce(array_to_string(p.proconfig, '|'), '-')
           || ' owner=' || pg_get_userbyid(p.proowner) || ' acl=' || ${acl('p.proacl')}
           || ' body_md5=' || md5(coalesce(p.prosrc, '')) as line
      from pg_proc p join pg_language l on l.oid = p.prolang
     where p.pronamespace = 'turnlog'::regnamespace`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'trigger ' || c.relname || '.' || t.tgname || ' enabled=' || t.tgenabled::text || ' ' || pg_get_triggerdef(t.oid) as line
      from pg_trigger t join pg_class c on c.oid = t.tgrelid
     where c.relnamespace = 'turnlog'::regnamespace and not t.tgisinternal`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'policy ' || c.relname || '.' || p.polname || ' cmd=' || p.polcmd::text || ' permissive=' || p.polpermissive
           || ' roles=' || (select string_agg(case when r = 0 then 'public' else pg_get_userbyid(r) end, ',' order by 1) from unnest(p.polroles) r)
           || ' using=' || coalesce(regexp_replace(pg_get_expr(p.polqual, p.polrelid), '\\s+', ' ', 'g'), '-')
           || ' check=' || coalesce(regexp_replace(pg_get_expr(p.polwithcheck, p.polrelid), '\\s+', ' ', 'g'), '-') as line
      from pg_policy p join pg_class c on c.oid = p.polrelid
     where c.relnamespace = 'turnlog'::regnamespace`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'type ' || t.typname || ' typtype=' || t.typtype::text || ' owner=' || pg_get_userbyid(t.typowner) || ' acl=' || ${acl('t.typacl')} as line
      from pg_type t
     where t.typnamespace = 'turnlog'::regnamespace
       and not (t.typtype = 'c' and exists (select 1 from pg_class c where c.oid = t.typrelid and c.relkind <> 'c'))
       and t.typelem = 0`))
    lines.push(String(r['line']))

  for (const r of await q(`
    select 'role ' || r.rolname || ' login=' || r.rolcanlogin || ' inherit=' || r.rolinherit || ' super=' || r.rolsuper
           || ' createrole=' || r.rolcreaterole || ' bypassrls=' || r.rolbypassrls || ' member_of='
           || coalesce((select string_agg(g.rolname || case when m.admin_option then '(admin)' else '' end, ',' order by g.rolname)
                          from pg_auth_members m join pg_roles g on g.oid = m.roleid
                         where m.member = r.oid and g.rolname in (${ROLES})), '-') as line
      from pg_roles r where r.rolname in (${ROLES})`))
    lines.push(String(r['line']))

  return `${lines.sort().join('\n')}\n`
}
