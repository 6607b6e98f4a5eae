/**
 * Migration 0008 fills `turnlog.message_ids` from the log already stored: per message id and tenant,
 * the first session that introduced it (in log order); a fork's copies claim nothing; a leftover of
 * the old race (one id introduced in two sessions of one tenant) keeps the first.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError } from '@turnlog/core'
import { migrateToLatest, openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { Migrator, sql, type Migration } from 'kysely'
import * as m0001 from '../src/migrations/0001_create_event_log.js'
import * as m0002 from '../src/migrations/0002_create_subscriptions.js'
import * as m0003 from '../src/migrations/0003_secure_event_log.js'
import * as m0004 from '../src/migrations/0004_create_batch_rebuild.js'
import * as m0005 from '../src/migrations/0005_add_group_append.js'
import * as m0006 from '../src/migrations/0006_speed_up_load.js'
import * as m0007 from '../src/migrations/0007_speed_up_import.js'

let db: TestDatabase
let store: PostgresStore

beforeAll(async () => {
  db = await createTestDatabase()
  store = await openStore({ connectionString: db.connectionString, pool: { max: 2 }, migrate: false, groupCommit: false })
})

afterAll(async () => {
  await store.close()
  await db.drop()
})

describe('0008 backfill of turnlog.message_ids', () => {
  it('claims each stored id for the first session of its tenant that introduced it, and nothing for fork copies', async () => {
    // given: a schema at 0007 with a log written through the store
    const upTo0007: Record<string, Migration> = {
      '0001_create_event_log': m0001, '0002_create_subscriptions': m0002, '0003_secure_event_log': m0003,
      '0004_create_batch_rebuild': m0004, '0005_add_group_append': m0005, '0006_speed_up_load': m0006, '0007_speed_up_import': m0007,
    }
    const migrator = new Migrator({
      db: store.db,
      provider: { getMigrations: async () => upTo0007 },
      migrationTableSchema: 'turnlog',
      migrationTableName: 'schema_migrations',
      migrationLockTableName: 'schema_migrations_lock',
    })
    const { error } = await migrator.migrateToLatest()
    expect(error).toBeUndefined()
    const x = createMessage({ role: 'user', content: 'x' })
    const y = createMessage({ role: 'assistant', content: 'y' })
    const a = await store.createSession()
    await store.append(a, [x, y])
    const child = await store.fork(a, { at: y.id })
    // x in another tenant too (what that tenant's own login may append; written here as the superuser,
    // whose classification sees every tenant)
    const b = await store.createSession({ tenantId: 't1' })
    await sql`
      insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
      select ${b}, 1, gen_random_uuid(), type, message_id, content_hash, payload, data
        from turnlog.events where session_id = ${a} and message_id = ${x.id}`.execute(store.db)
    await sql`update turnlog.sessions set version = 1 where session_id = ${b}`.execute(store.db)
    // a leftover of the old race: y introduced again in another session of A's tenant, after A
    const d = await store.createSession()
    await sql`
      insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
      select ${d}, 1, gen_random_uuid(), type, message_id, content_hash, payload, data
        from turnlog.events where session_id = ${a} and message_id = ${y.id}`.execute(store.db)
    await sql`update turnlog.sessions set version = 1 where session_id = ${d}`.execute(store.db)

    // when
    const { applied } = await migrateToLatest(store.db)

    // then
    expect(applied[0]).toBe('0008_unify_message_ids')
    const { rows } = await sql<{ message_id: string; tenant_scope: string; session_id: string }>`
      select message_id::text, tenant_scope, session_id::text from turnlog.message_ids order by message_id, tenant_scope`.execute(store.db)
    expect(rows).toEqual(
      [
        { message_id: x.id, tenant_scope: '', session_id: a },
        { message_id: x.id, tenant_scope: '=t1', session_id: b },
        { message_id: y.id, tenant_scope: '', session_id: a },
      ].sort((p, q) => (p.message_id === q.message_id ? p.tenant_scope.localeCompare(q.tenant_scope) : p.message_id < q.message_id ? -1 : 1)),
    )
    expect(rows.some((r) => r.session_id === child || r.session_id === d)).toBe(false)
    // and the arbiter holds from now on: x is A's in its tenant, a fork of A still shares it
    const e = await store.createSession()
    const refused = await store.append(e, [x]).catch((err: unknown) => err)
    expect(isTurnlogError(refused, 'MESSAGE_CONFLICT') && refused.details['reason']).toBe('foreign_session')
    const grandchild = await store.fork(child, { at: x.id })
    expect((await store.load(grandchild)).messages.map((m) => m.id)).toEqual([x.id])
  })
})
