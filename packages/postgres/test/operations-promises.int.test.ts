/**
 * docs/operations.md, the promises no other test pinned down on a real server (an audit of the
 * document, promise by promise):
 *
 * - A migration that fails after others ran in the same run: `MIGRATION_FAILED` naming it, its
 *   SQLSTATE and the cause; `details.results` marks the ones before it `RolledBack`; `details.step` is
 *   its name; nothing of the run is applied (no migration recorded, no function replaced); once the
 *   cause is fixed, migrating again applies them. (migrate-failure.test.ts checks the report's shape
 *   without a server; packages/cli/test/migrate-roles.int.test.ts the roles step.)
 * - A database of a development version before the baseline (`schema_migrations` naming migrations this
 *   version does not know): `MIGRATION_FAILED` ("corrupted migrations"), changing nothing and dropping
 *   nothing.
 * - Embedded data directories: a lock held on another host (a copy restored elsewhere, a shared file
 *   system) is never taken over, even when no process of that pid runs here: `DATA_DIR_LOCKED` names
 *   it, and deleting the `turnlog.lock.*` files frees the directory. One small file stays after release.
 * - Retention: dropping archived sessions as the schema owner, in one transaction, leaves the other
 *   sessions whole and the archived sessions' message ids free for reuse (regression: the documented
 *   list of tables left `message_ids` out, and a later append of such an id failed for ever: then with
 *   `DB_TRANSIENT`, now with `CORRUPT_LOG` naming it, dangling-claim.int.test.ts).
 */
import { readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { describe, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import { migrateToLatest, openStore, type PostgresStore } from '@turnlog/postgres'
import { DATA_DIR_LOCK_PREFIX, acquireDataDirLock } from '@turnlog/postgres/internal'
import { createTestDatabase, migrateByOpening, useTestStore, type TestDatabase, turnlogRejection } from '@turnlog/testing'
import pg from 'pg'

const user = (content: string): Message => createMessage({ role: 'user', content })

/** Runs SQL as the test server's superuser. */
async function superuser<T>(connectionString: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

/** Every turnlog function's definition and row version (an update of its catalog row changes `xmin`). */
async function functions(client: pg.Client): Promise<{ name: string; xmin: string; definition: string }[]> {
  const { rows } = await client.query<{ name: string; xmin: string; definition: string }>(
    `select p.oid::regprocedure::text as name, p.xmin::text as xmin, pg_get_functiondef(p.oid) as definition
       from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = 'turnlog' order by 1`,
  )
  return rows
}

/** The names `turnlog.schema_migrations` records, in order. */
async function recorded(client: pg.Client): Promise<string[]> {
  return (await client.query<{ name: string }>('select name from turnlog.schema_migrations order by name')).rows.map((r) => r.name)
}

describe('a failed migration (operations.md, Migrations)', () => {
  let db: TestDatabase
  let store: PostgresStore

  useTestStore((t) => ({ db, store } = t))

  it('fails after another ran in the same run: RolledBack, step and sqlState name it, nothing applied; fixed, it applies', async () => {
    // given a database at 0002 (0003 to 0010 pending; 0005 to 0010 are no-ops on this schema but for rebuild_read's text) where 0004 cannot replace project_event: a function
    // of that signature returning another type is in the way
    const before = await superuser(db.connectionString, async (c) => {
      await c.query(
        "delete from turnlog.schema_migrations where name in ('0003_accept_duplicates_without_content', '0004_repair_compaction_placement', '0005_tenant_subscriptions', '0006_check_fork_copies', '0007_read_appends_only_sessions', '0008_check_redaction_placeholders', '0009_keep_custom_tool_calls', '0010_hide_foreign_predecessors')",
      )
      await c.query('drop function turnlog.project_event(turnlog.events)')
      await c.query("create function turnlog.project_event(e turnlog.events) returns integer language sql as 'select 1'")
      return { functions: await functions(c), recorded: await recorded(c) }
    })
    // when
    const e = await turnlogRejection(migrateToLatest(store.db))
    // then
    expect(e.code).toBe('MIGRATION_FAILED')
    expect(e.message).toMatch(/^turnlog migration 0004_repair_compaction_placement failed \(SQLSTATE 42P13\): .*return type/)
    expect(e.message).toMatch(/nothing was applied \(rolled back with it: 0003_accept_duplicates_without_content\)/)
    expect(e.details).toEqual({
      results: [
        { name: '0003_accept_duplicates_without_content', status: 'RolledBack' },
        { name: '0004_repair_compaction_placement', status: 'Error' },
        { name: '0005_tenant_subscriptions', status: 'NotExecuted' },
        { name: '0006_check_fork_copies', status: 'NotExecuted' },
        { name: '0007_read_appends_only_sessions', status: 'NotExecuted' },
        { name: '0008_check_redaction_placeholders', status: 'NotExecuted' },
        { name: '0009_keep_custom_tool_calls', status: 'NotExecuted' },
        { name: '0010_hide_foreign_predecessors', status: 'NotExecuted' },
      ],
      failed: '0004_repair_compaction_placement',
      sqlState: '42P13',
      step: '0004_repair_compaction_placement',
      hint: expect.stringMatching(/Nothing was applied/),
    })
    expect((e.cause as { code?: unknown }).code).toBe('42P13')
    // and the schema stays at the previous version: nothing recorded, no function replaced (0003's
    // `create or replace` of the two append functions rolled back with the run)
    const after = await superuser(db.connectionString, async (c) => ({ functions: await functions(c), recorded: await recorded(c) }))
    expect(after).toEqual(before)
    expect(after.recorded).toEqual(['0001_create_schema', '0002_compute_append_links'])

    // when the cause is removed and the migration runs again
    await superuser(db.connectionString, async (c) => {
      await c.query('drop function turnlog.project_event(turnlog.events)')
      await c.query("create function turnlog.project_event(e turnlog.events) returns void language plpgsql as 'begin end'")
    })
    const again = await migrateToLatest(store.db)
    // then all eight apply, and the store works
    expect(again.applied).toEqual([
      '0003_accept_duplicates_without_content',
      '0004_repair_compaction_placement',
      '0005_tenant_subscriptions',
      '0006_check_fork_copies',
      '0007_read_appends_only_sessions',
      '0008_check_redaction_placeholders',
      '0009_keep_custom_tool_calls',
      '0010_hide_foreign_predecessors',
    ])
    const session = await store.createSession()
    await store.append(session, [user('after the repair')])
    expect((await store.load(session)).messages).toHaveLength(1)
  })

  it('a database of a development version before the baseline: MIGRATION_FAILED ("corrupted migrations"), nothing changed or dropped', async () => {
    // given a database whose bookkeeping names migrations this version does not know
    const old = await createTestDatabase({ migrate: migrateByOpening })
    const oldStore = await openStore({ connectionString: old.connectionString, migrate: false })
    try {
      const before = await superuser(old.connectionString, async (c) => {
        await c.query('delete from turnlog.schema_migrations')
        await c.query(
          "insert into turnlog.schema_migrations (name, timestamp) values ('0001_create_event_log', '2025-01-01'), ('0009_harden_redaction_and_roles', '2025-02-01')",
        )
        return { functions: await functions(c), recorded: await recorded(c) }
      })
      // when
      const viaMigrate = await turnlogRejection(migrateToLatest(oldStore.db))
      const viaOpen = await turnlogRejection(openStore({ connectionString: old.connectionString }))
      // then
      for (const e of [viaMigrate, viaOpen]) {
        expect(e.code).toBe('MIGRATION_FAILED')
        expect(e.message).toMatch(/corrupted migrations: previously executed migration 0001_create_event_log is missing/)
      }
      const after = await superuser(old.connectionString, async (c) => ({ functions: await functions(c), recorded: await recorded(c) }))
      expect(after).toEqual(before)
    } finally {
      await oldStore.close()
      await old.drop()
    }
  })
})

describe('concurrent deploys (operations.md, Migrations)', () => {
  it('four migrateToLatest and two openStore at once on an empty database: one run applies everything once, the others find it done', async () => {
    // given an empty database and six processes' worth of stores (separate pools)
    const fresh = await createTestDatabase()
    const stores = await Promise.all(
      [1, 2, 3, 4].map(() => openStore({ connectionString: fresh.connectionString, migrate: false, pool: { max: 1 } })),
    )
    const opened: PostgresStore[] = []
    try {
      // when
      const [results, openedStores] = await Promise.all([
        Promise.all(stores.map((st) => migrateToLatest(st.db))),
        Promise.all([1, 2].map(() => openStore({ connectionString: fresh.connectionString, pool: { max: 1 } }))),
      ])
      opened.push(...openedStores)
      // then: every migration applied by exactly one run, recorded once, and the stores work
      const applied = results.flatMap((r) => r.applied)
      const known = results[0]?.known ?? []
      expect([...applied].sort()).toEqual(results.some((r) => r.applied.length > 0) ? [...known].sort() : [])
      expect(results.filter((r) => r.applied.length > 0).length).toBeLessThanOrEqual(1)
      const names = await superuser(fresh.connectionString, recorded)
      expect(names).toEqual([...known].sort())
      const session = await opened[0]!.createSession()
      await opened[1]!.append(session, [user('after a concurrent deploy')])
      expect((await stores[0]!.load(session)).messages).toHaveLength(1)
    } finally {
      for (const st of [...stores, ...opened]) await st.close()
      await fresh.drop()
    }
  })
})

describe('retention: dropping archived sessions (operations.md, Retention)', () => {
  let db: TestDatabase
  let store: PostgresStore

  useTestStore((t) => ({ db, store } = t))

  /** The documented statements, as the schema owner, in one transaction. */
  async function dropSessions(sessionIds: readonly string[]): Promise<void> {
    await superuser(db.connectionString, async (c) => {
      await c.query('begin')
      await c.query('set local role turnlog_owner')
      for (const table of ['live_messages', 'events', 'conflicts', 'message_ids', 'sessions']) {
        await c.query(`delete from turnlog.${table} where session_id = any ($1::uuid[])`, [sessionIds])
      }
      await c.query('commit')
    })
  }

  it('leaves the other sessions whole, nothing of the archived ones, and their message ids free to use again', async () => {
    // given an archived session (with a recorded conflict) and one that stays
    const archived = await store.createSession()
    const kept = await store.createSession()
    const archivedMessage = user('archived turn')
    await store.append(archived, [archivedMessage, user('another archived turn')])
    await turnlogRejection(store.append(archived, [{ ...archivedMessage, payload: { role: 'user', content: 'changed' } }]))
    await store.append(kept, [user('kept turn')])
    const keptBefore = await store.load(kept)
    // when
    await dropSessions([archived])
    // then: no row of any turnlog table names the archived session
    const left = await superuser(db.connectionString, async (c) => {
      const tables = ['sessions', 'events', 'live_messages', 'conflicts', 'message_ids']
      const counts: Record<string, number> = {}
      for (const t of tables) {
        counts[t] = (await c.query(`select 1 from turnlog.${t} where session_id = $1`, [archived])).rowCount ?? -1
      }
      return counts
    })
    expect(left).toEqual({ sessions: 0, events: 0, live_messages: 0, conflicts: 0, message_ids: 0 })
    expect((await turnlogRejection(store.load(archived))).code).toBe('SESSION_NOT_FOUND')
    expect(await store.load(kept)).toEqual(keptBefore)
    expect((await store.rebuild({ verify: true })).drift).toEqual([])
    // and an archived message id can be written again (restored from the archive into another session)
    const restored = await store.createSession()
    const appended = await store.append(restored, [archivedMessage])
    expect(appended.appended).toEqual([archivedMessage.id])
  })
})

describe('embedded data directories (operations.md)', () => {
  it('a lock held on another host is never taken over: DATA_DIR_LOCKED names it; deleting the lock files frees the directory', async () => {
    // given a complete lock record of a pid that does not run here, written on another host
    const dir = await mkdtemp(join(tmpdir(), 'turnlog-ops-lock-'))
    try {
      const record = {
        state: 'held',
        pid: 999_999_999,
        startTime: null,
        hostname: 'turnlog-elsewhere.invalid',
        since: '2026-01-01T00:00:00.000Z',
        nonce: 'n',
      }
      const file = join(dir, `${DATA_DIR_LOCK_PREFIX}1`)
      writeFileSync(file, `${JSON.stringify(record)}\n`)
      // when
      const refused = await turnlogRejection(Promise.resolve().then(() => acquireDataDirLock(dir).release()))
      // then: refused, naming the holder and its host; the record is left as it was
      expect(refused.code).toBe('DATA_DIR_LOCKED')
      expect(refused.details['holder']).toMatchObject({ pid: 999_999_999, hostname: 'turnlog-elsewhere.invalid', since: record.since })
      expect(refused.message).toMatch(/process 999999999 on host turnlog-elsewhere\.invalid since 2026-01-01/)
      expect(readFileSync(file, 'utf8')).toBe(`${JSON.stringify(record)}\n`)

      // when the operator deletes the lock files (no process uses the directory)
      for (const name of readdirSync(dir)) if (name.startsWith(DATA_DIR_LOCK_PREFIX)) rmSync(join(dir, name))
      const lock = acquireDataDirLock(dir)
      lock.release()
      // then it is free again, and one small lock file stays after the release
      expect(lock.tookOverFrom ?? null).toBeNull()
      expect(readdirSync(dir).filter((name) => name.startsWith(DATA_DIR_LOCK_PREFIX))).toHaveLength(1)
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  })
})
