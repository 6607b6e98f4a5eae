import { describe, expect, it } from '@jest/globals'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { sql } from 'kysely'

let store: PostgresStore

useTestStore((t) => ({ store } = t), { pool: { max: 2 } })

/** kysely's own bookkeeping tables, which are not turnlog data. */
const MIGRATION_TABLES = ['schema_migrations', 'schema_migrations_lock']

/**
 * Tables that hold no per-session data at all (no `session_id` column), with why. They are reference
 * tables, not sharded by session; any other table must key on session_id. A new table without
 * session_id fails this test until it is listed here, on purpose.
 */
const GLOBAL_TABLES: Readonly<Record<string, string>> = {
  subscriptions: 'one checkpoint per named consumer and tenant (tenant_id since 0005); surrogate primary key',
  tenant_roles: 'maps database roles to tenants for row level security (baseline 0001)',
}

/**
 * Tables keyed by message id, not by session, with why: the cross-session check itself, which cannot be
 * per session. Each is shardable by `message_id` (every one of its unique keys includes it); on Citus
 * it is distributed by `message_id` (docs/scaling.md).
 */
const MESSAGE_KEYED_TABLES: Readonly<Record<string, string>> = {
  message_ids: 'one row per message id and tenant, the session that introduced it: its primary key is the arbiter (baseline 0001)',
}

describe('schema catalog (Postgres)', () => {
  it('every primary and unique key of every turnlog table with session data includes session_id (shardable by session); the global tables are listed', async () => {
    // given: the migrated schema

    // when: every unique index (primary keys and unique constraints are backed by one), from pg_catalog
    const { rows: indexes } = await sql<{
      table_name: string
      index_name: string
      is_primary: boolean
      columns: string[] | string
      definition: string
    }>`
      select t.relname as table_name, i.relname as index_name, x.indisprimary as is_primary,
             array(select a.attname::text from unnest(x.indkey) with ordinality k(attnum, ord)
                     left join pg_attribute a on a.attrelid = t.oid and a.attnum = k.attnum
                    order by k.ord) as columns,
             pg_get_indexdef(x.indexrelid) as definition
        from pg_index x
        join pg_class t on t.oid = x.indrelid
        join pg_class i on i.oid = x.indexrelid
        join pg_namespace n on n.oid = t.relnamespace
       where n.nspname = 'turnlog' and x.indisunique
         and t.relname not in (${sql.join(MIGRATION_TABLES)})
       order by 1, 2`.execute(store.db)
    // and every primary/unique constraint with its columns, from information_schema
    const { rows: constraints } = await sql<{
      table_name: string
      constraint_name: string
      constraint_type: string
      columns: string[] | string
    }>`
      select tc.table_name::text, tc.constraint_name::text, tc.constraint_type::text,
             array(select k.column_name::text from information_schema.key_column_usage k
                    where k.constraint_schema = tc.constraint_schema and k.constraint_name = tc.constraint_name
                      and k.table_name = tc.table_name order by k.ordinal_position) as columns
        from information_schema.table_constraints tc
       where tc.table_schema = 'turnlog' and tc.constraint_type in ('PRIMARY KEY', 'UNIQUE')
         and tc.table_name not in (${sql.join(MIGRATION_TABLES)})
       order by 1, 2`.execute(store.db)
    const { rows: tables } = await sql<{ table_name: string; has_session_id: boolean }>`
      select c.relname as table_name,
             exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'session_id' and not a.attisdropped) as has_session_id
        from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where n.nspname = 'turnlog' and c.relkind in ('r', 'p') and c.relname not in (${sql.join(MIGRATION_TABLES)})
       order by 1`.execute(store.db)

    // then: the session tables exist; the tables without session_id are exactly the listed global ones
    const list = (v: string[] | string): string[] => (Array.isArray(v) ? v : v.replace(/^\{|\}$/g, '').split(','))
    const tableNames = tables.map((t) => t.table_name)
    expect(tableNames).toEqual(expect.arrayContaining(['conflicts', 'events', 'live_messages', 'sessions']))
    expect(tables.filter((t) => !t.has_session_id).map((t) => t.table_name)).toEqual(Object.keys(GLOBAL_TABLES).sort())
    const byMessage = new Set(Object.keys(MESSAGE_KEYED_TABLES))
    expect(tableNames).toEqual(expect.arrayContaining([...byMessage]))
    const perSession = new Set(tables.filter((t) => t.has_session_id && !byMessage.has(t.table_name)).map((t) => t.table_name))
    // the message-keyed tables: every unique key includes message_id
    expect([
      ...indexes
        .filter((i) => byMessage.has(i.table_name) && !list(i.columns).includes('message_id'))
        .map((i) => `${i.table_name}: ${i.definition}`),
      ...constraints
        .filter((c) => byMessage.has(c.table_name) && !list(c.columns).includes('message_id'))
        .map((c) => `${c.table_name}.${c.constraint_name}`),
    ]).toEqual([])
    // and every primary/unique key of every table that holds session data includes session_id
    const withoutSession = [
      ...indexes
        .filter((i) => perSession.has(i.table_name) && !list(i.columns).includes('session_id'))
        .map((i) => `${i.table_name}: ${i.definition}`),
      ...constraints
        .filter((c) => perSession.has(c.table_name) && !list(c.columns).includes('session_id'))
        .map((c) => `${c.table_name}.${c.constraint_name} (${c.constraint_type})`),
    ]
    expect(withoutSession).toEqual([])
    // every table has a primary key, and the two catalogs agree on the constraints
    expect(tableNames.filter((t) => !indexes.some((i) => i.table_name === t && i.is_primary))).toEqual([])
    expect(constraints.length).toBeGreaterThanOrEqual(tableNames.length)
    for (const c of constraints) expect(indexes.map((i) => i.index_name)).toContain(c.constraint_name)
  })
})
