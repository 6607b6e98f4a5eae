-- Ownership: the schema and everything in it (kysely's bookkeeping tables included) belong to turnlog_owner.
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
