/**
 * docs/operations.md, second pass: every promise of the document and the test that holds it; this file
 * tests the ones that had none (marked NEW). Real Postgres, real PGlite directories, real login roles,
 * real child processes (the bundle test reads `dist/`: build first). Test files under packages/postgres/test
 * unless another package is named.
 *
 * | promise | test |
 * |---|---|
 * | Migrations: openStore migrates unless `migrate: false` | integrating-promises, error-promises |
 * | one transaction under kysely's advisory lock; concurrent deploys; a failure is MIGRATION_FAILED (message, results RolledBack, step, sqlState, hint), the previous version kept | operations-promises, migrate-failure |
 * | roles step: refused before anything is created (roles missing and no CREATEROLE / no membership), details, `--roles-sql` (no connection, idempotent), then migrate works; a failed first run drops kysely's schema, an existing one is kept; CLI exit 3 | cli/migrate-roles, cli/cli-promises |
 * | nine migrations and what each does; the catalog snapshot | cli/cli-promises, security/redaction-*, schema-promises, compaction-placement, append-without-content, upgrade-from-0001, schema-catalog |
 * | `sql/` ships with the package, read next to dist/; a bundle needs it beside its parent directory | schema-files; NEW (bundled module) |
 * | pre-baseline databases: "corrupted migrations", nothing changed | operations-promises |
 * | session-level lock: not through transaction pooling | security/pgbouncer |
 * | 0007: old sessions false and loading as before, no table rewritten, new ones true, rebuild sets them, verify quiet | NEW; schema-promises |
 * | 0005: checkpoints kept untenanted, one UPDATE assigns; old consumers' INSERT/UPDATE/ON CONFLICT refused; a tenant consumer before the UPDATE starts at its `from` | upgrade-from-0001, security/subscription-tenants; NEW |
 * | openStore retries a transient failure 5 times over ≈ 1.5 s | faults/open-store-retry |
 * | Shutdown: close stops subscriptions (catchUp SUBSCRIPTION_STOPPED), waits for running calls, ends its pool / PGlite / lock, leaves yours (pool, Kysely, PGlite); nothing keeps the process alive | subscriptions-doc-promises, close-in-flight, data-dir-lock, integrating-promises, open-store-pglite, process-exit; NEW (backends gone, Kysely) |
 * | Embedded: lock per directory (other process and same), holder named, dead holder taken over, other host never; lock files | data-dir-lock, operations-promises |
 * | a missing dataDir is created; one free lock file stays; a copy of a closed directory opens; `{ pglite }` takes no lock | NEW |
 * | shared PGlite instance, transaction lock, pglite-connection-held; DATA_DIR_INVALID | pglite-shared-instance, pglite-held-connection, data-dir-invalid |
 * | Group commit: shared statements; defaults 32/2; maxInFlight bounds statements in flight; `false`: one transaction each; a lone append goes at once | group-commit.int, group-commit.test (lone, same tick); NEW (defaults, bounds, off) |
 * | Direct connections: options added to pool.options, named statements, off by default, 26000 fallback, functions set their own | load.int; NEW (42P05; the subscription's connection, fixed) |
 * | Backups: pg_dump, export/import identical, audit and rebuild --verify; logical restore needs a rebase; stores open across a restore rewrite what was lost | cli/cli-operations, subscription-delivery, flush-behind-order |
 * | Monitoring: oldestOpenTransaction, idle_in_transaction_session_timeout, table size; conflicts and audit; lag; codes | NEW; prepared-transactions, conflict-evidence, audit tests, subscription-promises, error-promises |
 * | Tracing: spans and attributes of every call, INTERNAL, error.type and `_OTHER`, 64 characters, no span for close/withTransaction/atomically/subscribe/getters, nesting, group-commit parent; metrics, units, meter; `telemetry: false / { tracer, meter }`; a direct PostgresStore; later providers | telemetry.int; NEW (the rest; fixed: import/lookup spans, group parent, nesting across stores) |
 * | Retention: redact keeps the chain; dropping sessions (message_ids too); a dangling claim is CORRUPT_LOG after one retry, DB_TRANSIENT inside a transaction, freed by deleting the row | security/redaction, operations-promises, dangling-claim; NEW (transaction, freeing) |
 * | Projections: verify reports drift without writing (appends_only too); batches of ≤ 200 checked before commit; safe with writers | projection-repair, schema-promises, batch-rebuild.prop; NEW (check before commit) |
 *
 * Not tested: the cost figures (the bench), physical backups, Citus (scaling.md).
 */
import { spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { context, metrics, SpanKind, SpanStatusCode, trace } from '@opentelemetry/api'
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks'
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg'
import { MeterProvider, MetricReader, type DataPoint, type Histogram, type MetricData } from '@opentelemetry/sdk-metrics'
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider, type ReadableSpan } from '@opentelemetry/sdk-trace'
import { exportSessions, importEvents } from '@turnlog/audit'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { migrateToLatest, openStore, PostgresStore } from '@turnlog/postgres'
import { DATA_DIR_LOCK_PREFIX } from '@turnlog/postgres/internal'
import { createTestDatabase, migrateByOpening, turnlogRejection, useTestStore, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'
import pg from 'pg'
import { createLoginRole, dropLoginRoles, sqlStateOf, type LoginRole } from './security/support/security-fixtures.js'
import { appendedSessions, logStatements, type LoggedStatement } from './support/statement-log.js'

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string, options: { status?: 'partial' } = {}): Message => createMessage({ role: 'assistant', content }, options)

/** Runs `fn` on a fresh client of `url` (the test server's superuser unless the URL says otherwise). */
async function withClient<T>(url: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end().catch(() => {})
  }
}

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

describe('Migrations: upgrading to 0007 (operations.md, "Upgrading to 0007")', () => {
  it('existing sessions get appends_only = false and load as before, no table is rewritten; new sessions get it; rebuild sets it from the log', async () => {
    // given a database at 0006 with a plain session and a rewound one (0007 to 0010 not applied, no appends_only column)
    const old = await createTestDatabase({ migrate: migrateByOpening })
    const oldStore = await openStore({ connectionString: old.connectionString, migrate: false, pool: { max: 2 } })
    try {
      const plain = await oldStore.createSession()
      await oldStore.append(plain, [user('plain 1'), assistant('plain 2')])
      const rewound = await oldStore.createSession()
      const [kept, gone] = [user('kept'), assistant('rewound')]
      await oldStore.append(rewound, [kept, gone])
      await oldStore.rewind(rewound, { after: kept.id })
      const loadedBefore = [await oldStore.load(plain), await oldStore.load(rewound)]
      const before = await withClient(old.connectionString, async (c) => {
        await c.query("delete from turnlog.schema_migrations where name >= '0007'")
        await c.query('alter table turnlog.sessions drop column appends_only')
        const files = await c.query<{ relname: string; node: string }>(
          "select relname, pg_relation_filenode(oid)::text as node from pg_class where relnamespace = 'turnlog'::regnamespace and relkind = 'r' order by 1",
        )
        const events = await c.query<{ rows: string }>(
          "select string_agg(ctid::text || xmin::text, ',' order by session_id, seq) as rows from turnlog.events",
        )
        return { files: files.rows, events: events.rows[0]?.rows }
      })

      // when the new version migrates it
      const { applied } = await migrateToLatest(oldStore.db)

      // then 0007 (and the three after it) applied; every existing session has the flag unset, loads as
      // before, and no table was rewritten (same files) nor any event touched
      expect(applied).toEqual([
        '0007_read_appends_only_sessions',
        '0008_check_redaction_placeholders',
        '0009_keep_custom_tool_calls',
        '0010_hide_foreign_predecessors',
      ])
      const flags = async (): Promise<Record<string, boolean>> =>
        withClient(old.connectionString, async (c) =>
          Object.fromEntries(
            (await c.query<{ id: string; f: boolean }>('select session_id as id, appends_only as f from turnlog.sessions')).rows.map(
              (r) => [r.id, r.f],
            ),
          ),
        )
      expect(await flags()).toEqual({ [plain]: false, [rewound]: false })
      const after = await withClient(old.connectionString, async (c) => ({
        files: (
          await c.query<{ relname: string; node: string }>(
            "select relname, pg_relation_filenode(oid)::text as node from pg_class where relnamespace = 'turnlog'::regnamespace and relkind = 'r' and relname <> 'schema_migrations' order by 1",
          )
        ).rows,
        events: (
          await c.query<{ rows: string }>(
            "select string_agg(ctid::text || xmin::text, ',' order by session_id, seq) as rows from turnlog.events",
          )
        ).rows[0]?.rows,
      }))
      expect(after.files).toEqual(before.files.filter((f) => f.relname !== 'schema_migrations'))
      expect(after.events).toBe(before.events)
      expect([await oldStore.load(plain), await oldStore.load(rewound)]).toEqual(loadedBefore)
      // and rebuild --verify does not call an unset flag drift
      expect((await oldStore.rebuild({ verify: true })).drift).toEqual([])

      // when a session is created after the migration
      const fresh = await oldStore.createSession()
      await oldStore.append(fresh, [user('after 0007')])
      // then it has the flag from its first append on
      expect((await flags())[fresh]).toBe(true)

      // when the operator runs a rebuild once
      await oldStore.rebuild()
      // then each flag is what its log says, and the sessions load as before
      expect(await flags()).toEqual({ [plain]: true, [rewound]: false, [fresh]: true })
      expect([await oldStore.load(plain), await oldStore.load(rewound)]).toEqual(loadedBefore)
    } finally {
      await oldStore.close()
      await old.drop()
    }
  })
})

describe('Migrations: the sql/ files of a bundled application (operations.md)', () => {
  it("read from `sql/` next to the bundled module's parent directory: found once copied there, a clear ENOENT before", async () => {
    // given the module that reads the schema files, as a bundler leaves it (one file, out/app.mjs) with no sql/ beside it yet
    const built = fileURLToPath(new URL('../dist/schema-sql.js', import.meta.url))
    if (!existsSync(built)) throw new Error(`${built} is missing: run \`npx -y pnpm@12.4.2 build\` before this test`)
    const app = await mkdtemp(join(tmpdir(), 'turnlog-bundle-'))
    try {
      mkdirSync(join(app, 'out'))
      cpSync(built, join(app, 'out', 'app.mjs'))
      const run = (): { status: number | null; stdout: string; stderr: string } =>
        spawnSync(
          process.execPath,
          [
            '--input-type=module',
            '-e',
            `const m = await import(${JSON.stringify(pathToFileURL(join(app, 'out', 'app.mjs')).href)}); process.stdout.write(String(m.schemaSql().length))`,
          ],
          {
            encoding: 'utf8',
            env: { ...process.env, NODE_OPTIONS: '' },
          },
        )
      // when it runs before and after `node_modules/@turnlog/postgres/sql` is copied next to out/
      const before = run()
      cpSync(fileURLToPath(new URL('../sql/', import.meta.url)), join(app, 'sql'), { recursive: true })
      const after = run()
      // then
      expect(before.status).not.toBe(0)
      expect(before.stderr).toContain(`ENOENT: no such file or directory, open '${join(app, 'sql', 'roles.sql')}'`)
      expect(after).toMatchObject({ status: 0, stderr: '' })
      expect(Number(after.stdout)).toBeGreaterThan(10_000)
    } finally {
      await rm(app, { recursive: true, force: true })
    }
  })
})

describe('Migrations: upgrading to 0005 (operations.md, "Upgrading to 0005")', () => {
  const roles: LoginRole[] = []
  afterAll(async () => {
    await dropLoginRoles(roles)
  })

  it("a consumer of a version before 0005 cannot write its checkpoint (a writer's INSERT and UPDATE are refused, and its ON CONFLICT (name) finds no key even as the owner)", async () => {
    // given a writer login and an untenanted checkpoint
    const writer = await createLoginRole(db, 'opsw', { groups: ['turnlog_writer'] })
    roles.push(writer)
    const sub = store.subscribe({ name: 'pre-0005' }, () => {})
    await sub.catchUp()
    await sub.stop()
    // when the release before 0005 runs its statements (checkpoint-row.ts of 13da962) on it
    const create =
      "insert into turnlog.subscriptions (name, tx_id, global_position) select 'pre-0005-new', '0'::xid8, 0 where true on conflict (name) do nothing"
    const move =
      "update turnlog.subscriptions set tx_id = '1'::xid8, global_position = 1, delivered = delivered + 1, updated_at = now(), last_error = null where name = 'pre-0005'"
    const lease = "update turnlog.subscriptions set listening_until = now() + make_interval(secs => 5) where name = 'pre-0005'"
    // then: as the writer every one is refused; as the owner the create finds no key for ON CONFLICT (name)
    expect([
      await sqlStateOf(writer.connectionString, create),
      await sqlStateOf(writer.connectionString, move),
      await sqlStateOf(writer.connectionString, lease),
    ]).toEqual(['42P10', '42501', '42501'])
    const asOwner = await withClient(db.connectionString, async (c) => {
      await c.query('begin')
      await c.query('set local role turnlog_owner')
      return c.query(create).then(
        () => 'ok',
        (e: { code?: string }) => e.code,
      )
    })
    expect(asOwner).toBe('42P10')
  })

  it("a tenant's consumer started before its checkpoint is assigned does not find it: it creates its own at its `from` ('start': the tenant's whole log again)", async () => {
    // given a tenant's session, and an untenanted checkpoint 'ops-projector' past all of it (as 0005 leaves a consumer's row)
    const acme = await createLoginRole(db, 'opsacme', { groups: ['turnlog_writer'], tenant: 'acme-ops' })
    roles.push(acme)
    const tenantStore = await openStore({ connectionString: acme.connectionString, migrate: false, pool: { max: 2 } })
    try {
      const session = await tenantStore.createSession({ tenantId: 'acme-ops' })
      await tenantStore.append(session, [user('acme 1'), user('acme 2')])
      const owner = store.subscribe({ name: 'ops-projector' }, () => {})
      await owner.catchUp()
      await owner.stop()
      // when the tenant's consumer of that name starts before the operator's UPDATE
      const seen: string[] = []
      const consumer = tenantStore.subscribe({ name: 'ops-projector', from: 'start' }, (e) => void seen.push(`${e.sessionId}:${e.seq}`))
      await consumer.catchUp()
      await consumer.stop()
      // then it got the tenant's whole log again, and a second row of that name now exists, the tenant's
      expect(seen).toEqual([`${session}:1`, `${session}:2`])
      const rows = await withClient(
        db.connectionString,
        async (c) =>
          (
            await c.query<{ tenant_id: string | null }>(
              "select tenant_id from turnlog.subscriptions where name = 'ops-projector' order by tenant_id nulls first",
            )
          ).rows,
      )
      expect(rows.map((r) => r.tenant_id)).toEqual([null, 'acme-ops'])
    } finally {
      await tenantStore.close()
    }
  })
})

describe('Shutdown (operations.md)', () => {
  it("close() ends the pool of { connectionString } (no backend of it stays) and leaves a caller's Kysely working", async () => {
    // given a store with its own pool, its connections in use, and a store on the test store's Kysely
    const own = await openStore({
      connectionString: db.connectionString,
      migrate: false,
      pool: { max: 3, application_name: 'ops-close-own' },
    })
    const session = await own.createSession()
    await Promise.all([own.append(session, [user('a')]), own.load(session), own.getSession(session)])
    const onKysely = await openStore({ kysely: store.db, migrate: false })
    await onKysely.load(session)
    const backends = async (): Promise<number> =>
      withClient(db.connectionString, async (c) =>
        Number(
          (await c.query<{ n: string }>("select count(*) as n from pg_stat_activity where application_name = 'ops-close-own'")).rows[0]?.n,
        ),
      )
    expect(await backends()).toBeGreaterThan(0)
    // when
    await own.close()
    await onKysely.close()
    // then the server has no backend of the closed pool left (a disconnect completes a moment later)
    const deadline = performance.now() + 2_000
    while ((await backends()) > 0 && performance.now() < deadline) await new Promise((r) => setTimeout(r, 20))
    expect(await backends()).toBe(0)
    // and the caller's Kysely (here the test store's) still runs statements
    expect((await sql<{ one: number }>`select 1 as one`.execute(store.db)).rows).toEqual([{ one: 1 }])
    expect((await store.load(session)).messages).toHaveLength(1)
  })
})

describe('Embedded (PGlite) data directories (operations.md)', () => {
  let root: string
  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), 'turnlog-ops-doc-'))
  })
  afterAll(async () => {
    if (root !== undefined) await rm(root, { recursive: true, force: true })
  })

  it('a missing dataDir is created and one lock file stays, free, after close; a copy of the closed directory opens on your own PGlite instance, which takes no lock', async () => {
    // given a directory that does not exist, two levels deep
    const dataDir = join(root, 'missing', 'deeper')
    // when a store opens it, writes and closes
    const first = await openStore({ embedded: true, dataDir })
    const session = await first.createSession()
    await first.append(session, [user('kept in the directory')])
    await first.close()
    // then the directory exists and one small lock file says it is free
    const lockFiles = readdirSync(dataDir).filter((n) => n.startsWith(DATA_DIR_LOCK_PREFIX))
    expect(lockFiles).toHaveLength(1)
    const lockFile = lockFiles[0] ?? ''
    const free = readFileSync(join(dataDir, lockFile), 'utf8')
    expect(JSON.parse(free)).toMatchObject({ state: 'free' })

    // when the closed directory is copied (a backup) and the copy is opened on the caller's own instance
    const copy = join(root, 'restored')
    cpSync(dataDir, copy, { recursive: true })
    const { PGlite } = await import('@electric-sql/pglite')
    const pglite = await PGlite.create(copy)
    try {
      const restored = await openStore({ pglite })
      // then it holds the data
      expect((await restored.load(session)).messages.map((m) => m.payload.content)).toEqual(['kept in the directory'])
      // and the store took no lock (the copied free record is all there is): guarding the directory is the caller's
      await restored.append(session, [user('on my instance')])
      expect(readdirSync(copy).filter((n) => n.startsWith(DATA_DIR_LOCK_PREFIX))).toEqual([lockFile])
      expect(readFileSync(join(copy, lockFile), 'utf8')).toBe(free)
      await restored.close()
    } finally {
      await pglite.close()
    }
  })
})

/** The most statements of `log` that were in flight at once, among those `pick` selects. */
function mostInFlight(statements: readonly LoggedStatement[], pick: (s: LoggedStatement) => boolean): number {
  const edges = statements.filter(pick).flatMap((s) => [
    [s.start, 1],
    [s.end, -1],
  ])
  edges.sort((a, b) => (a[0] ?? 0) - (b[0] ?? 0) || (a[1] ?? 0) - (b[1] ?? 0))
  let now = 0
  let most = 0
  for (const [, d] of edges) most = Math.max(most, (now += d ?? 0))
  return most
}

const isAppend = (s: LoggedStatement): boolean => appendedSessions(s).length > 0

describe('Group commit (operations.md)', () => {
  /** 40 appends to 40 sessions at once through `target`, each statement's reply held 40 ms; the statements they sent. */
  async function concurrentAppends(target: PostgresStore): Promise<{ statements: LoggedStatement[]; sessions: SessionId[] }> {
    const sessions: SessionId[] = []
    for (let i = 0; i < 40; i++) sessions.push(await target.createSession())
    const log = logStatements(db.name)
    log.hold = (s) => (isAppend(s) ? 40 : 0)
    try {
      await Promise.all(sessions.map((s, i) => target.append(s, [user(`turn ${i}`)])))
    } finally {
      log.restore()
    }
    return { statements: log.statements.filter(isAppend), sessions }
  }

  /** The distinct transaction ids of the sessions' events. */
  async function transactions(sessions: readonly SessionId[]): Promise<number> {
    const { rows } = await sql<{ n: string }>`
      select count(distinct tx_id) as n from turnlog.events where session_id = any (${sessions as SessionId[]}::uuid[])`.execute(store.db)
    return Number(rows[0]?.n)
  }

  it('defaults { maxBatches: 32, maxInFlight: 2 }: at most 32 sessions in a statement and 2 statements in flight, each append once', async () => {
    // given a store with the defaults and a pool larger than they need
    const own = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 8 } })
    try {
      // when
      const { statements, sessions } = await concurrentAppends(own)
      // then
      const sizes = statements.map((s) => appendedSessions(s).length)
      expect(Math.max(...sizes)).toBeLessThanOrEqual(32)
      expect(Math.max(...sizes)).toBeGreaterThan(1)
      expect(mostInFlight(statements, () => true)).toBe(2)
      expect(statements.flatMap(appendedSessions).sort()).toEqual([...sessions].sort())
      expect(await transactions(sessions)).toBe(statements.length)
    } finally {
      await own.close()
    }
  })

  it('maxInFlight: 1 keeps one append statement in flight; groupCommit: false sends every append on its own, one transaction each', async () => {
    // given
    const one = await openStore({
      connectionString: db.connectionString,
      migrate: false,
      pool: { max: 8 },
      groupCommit: { maxInFlight: 1 },
    })
    const off = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 8 }, groupCommit: false })
    try {
      // when
      const serial = await concurrentAppends(one)
      const alone = await concurrentAppends(off)
      // then
      expect(mostInFlight(serial.statements, () => true)).toBe(1)
      expect(alone.statements.map((s) => appendedSessions(s).length)).toEqual(Array(40).fill(1))
      expect(alone.statements.every((s) => s.text.includes('turnlog.append_messages('))).toBe(true)
      expect(mostInFlight(alone.statements, () => true)).toBeGreaterThan(2)
      expect(await transactions(alone.sessions)).toBe(40)
    } finally {
      await one.close()
      await off.close()
    }
  })
})

describe('Direct connections (operations.md)', () => {
  it('a prepared statement that exists already on the connection (42P05): the call runs unnamed, and the store stops preparing', async () => {
    // given a direct store on one connection where another client of a pooler prepared the store's statement name
    const own = await openStore({ connectionString: db.connectionString, migrate: false, directConnection: true, pool: { max: 1 } })
    try {
      const session = await own.createSession()
      await sql`prepare turnlog_append_messages_1 as select 1`.execute(own.db)
      // when (pg-pool ends a connection whose statement failed: the next call gets a new one)
      const appended = await own.append(session, [user('after 42P05')])
      await own.load(session)
      await own.append(session, [user('and after that')])
      // then the append succeeded once, and the store prepared nothing since (load and append unnamed)
      expect(appended.appended).toHaveLength(1)
      expect((await own.load(session)).messages.map((m) => m.payload.content)).toEqual(['after 42P05', 'and after that'])
      const { rows } = await sql<{ name: string }>`select name from pg_prepared_statements order by name`.execute(own.db)
      expect(rows).toEqual([])
    } finally {
      await own.close()
    }
  })

  it("the store's connections run without JIT and parallel workers: a subscription's own connection too", async () => {
    // given a direct store with an option of the caller's, and a transactional subscription (its handler runs on that connection)
    const own = await openStore({
      connectionString: db.connectionString,
      migrate: false,
      directConnection: true,
      pool: { max: 1, options: '-c statement_timeout=4321' },
    })
    try {
      const session = await own.createSession()
      await own.append(session, [user('seen by the consumer')])
      const settings: unknown[] = []
      const sub = own.subscribe(
        { name: 'ops-direct-settings', from: 'start' },
        async (_event, { transaction }) => {
          if (transaction === undefined) return
          const { rows } = await sql<{ jit: string; workers: string; timeout: string }>`
            select current_setting('jit') as jit, current_setting('max_parallel_workers_per_gather') as workers,
                   current_setting('statement_timeout') as timeout`.execute(transaction)
          settings.push(rows[0])
        },
        { transactional: true },
      )
      await sub.catchUp()
      await sub.stop()
      // then
      expect(settings.length).toBeGreaterThan(0)
      for (const s of settings) expect(s).toEqual({ jit: 'off', workers: '0', timeout: '4321ms' })
    } finally {
      await own.close()
    }
  })
})

describe('Monitoring (operations.md)', () => {
  it('oldestOpenTransaction reports an open transaction with an id, and idle_in_transaction_session_timeout ends a crashed client’s; the table-size query answers', async () => {
    // given a client that took a transaction id and went idle, with the timeout the table recommends (shortened)
    const idle = new pg.Client({ connectionString: db.connectionString, options: '-c idle_in_transaction_session_timeout=300' })
    idle.on('error', () => {})
    await idle.connect()
    try {
      await idle.query('begin')
      const { rows } = await idle.query<{ xid: string; pid: number }>('select pg_current_xact_id()::text as xid, pg_backend_pid() as pid')
      // when the store asks at once
      const open = await store.oldestOpenTransaction({ scope: 'database' })
      // then it names that transaction
      expect(open).toMatchObject({ pid: rows[0]?.pid, xid: rows[0]?.xid, state: 'idle in transaction', database: db.name })
      expect(open?.ageMs).toBeGreaterThanOrEqual(0)
      // when the timeout passes: the server ends the session, and nothing holds readers back any more
      const deadline = performance.now() + 5_000
      let now = open
      while (now?.pid === rows[0]?.pid && performance.now() < deadline) {
        await new Promise((r) => setTimeout(r, 100))
        now = await store.oldestOpenTransaction({ scope: 'database' })
      }
      expect(now?.pid ?? null).not.toBe(rows[0]?.pid)
    } finally {
      await idle.end().catch(() => {})
    }
    const { rows } = await sql<{ bytes: string }>`select pg_total_relation_size('turnlog.events')::text as bytes`.execute(store.db)
    expect(Number(rows[0]?.bytes)).toBeGreaterThan(0)
  })
})

describe('Retention: a message_ids row left behind (operations.md)', () => {
  it('inside atomically() every write of the id is DB_TRANSIENT, retries too; deleting the row as the schema owner frees the id', async () => {
    // given an archived session dropped without its message_ids rows
    const message = user('archived, claim left behind')
    const archived = await store.createSession()
    await store.append(archived, [message])
    await withClient(db.connectionString, async (c) => {
      await c.query('begin')
      await c.query('set local role turnlog_owner')
      for (const table of ['live_messages', 'events', 'conflicts', 'sessions'])
        await c.query(`delete from turnlog.${table} where session_id = $1`, [archived])
      await c.query('commit')
    })
    const session = await store.createSession()
    // when the id is written inside atomically(), twice
    const first = await turnlogRejection(store.atomically((tx) => tx.append(session, [message])))
    const retry = await turnlogRejection(store.atomically((tx) => tx.append(session, [message])))
    // then both are DB_TRANSIENT, and nothing was written
    expect([first.code, retry.code]).toEqual(['DB_TRANSIENT', 'DB_TRANSIENT'])
    expect((await store.getSession(session)).version).toBe(0)
    // and outside a transaction: CORRUPT_LOG naming the id
    expect(await turnlogRejection(store.append(session, [message]))).toMatchObject({
      code: 'CORRUPT_LOG',
      details: { messageId: message.id },
    })

    // when the operator deletes the row as the schema owner
    await withClient(db.connectionString, async (c) => {
      await c.query('begin')
      await c.query('set local role turnlog_owner')
      await c.query('delete from turnlog.message_ids where message_id = $1', [message.id])
      await c.query('commit')
    })
    // then the id can be written again, inside atomically() too
    const appended = await store.atomically((tx) => tx.append(session, [message]))
    expect(appended.appended).toEqual([message.id])
  })
})

describe('Projections (operations.md)', () => {
  it('rebuild checks each batch (up to 200 sessions) against the fold before committing: a batch whose rewrite differs rolls back, an earlier batch stays rebuilt', async () => {
    // given a database of 201 sessions; the first and the last in id order have a projection row deleted (drift)
    const own = await createTestDatabase({ migrate: migrateByOpening })
    const ownStore = await openStore({ connectionString: own.connectionString, migrate: false, pool: { max: 4 } })
    try {
      const ids: SessionId[] = []
      for (let i = 0; i < 201; i += 50)
        ids.push(...(await Promise.all(Array.from({ length: Math.min(50, 201 - i) }, () => ownStore.createSession()))))
      ids.sort()
      const [first, last] = [ids[0] as SessionId, ids[200] as SessionId]
      for (const s of [first, last]) await ownStore.append(s, [user(`${s} 1`), user(`${s} 2`)])
      const liveRows = async (s: SessionId): Promise<number> =>
        withClient(own.connectionString, async (c) =>
          Number((await c.query<{ n: string }>('select count(*) as n from turnlog.live_messages where session_id = $1', [s])).rows[0]?.n),
        )
      await withClient(own.connectionString, async (c) => {
        await c.query('delete from turnlog.live_messages where session_id = any ($1::uuid[]) and position = 2', [[first, last]])
        // and the rebuild's rewrite of the last session goes wrong: its rows come out with the wrong partial flag
        await c.query(`create function public.flip_partial() returns trigger language plpgsql as $$
          begin new.partial := not new.partial; return new; end $$`)
        await c.query(`create trigger flip_partial before insert on turnlog.live_messages for each row
          when (new.session_id = '${last}'::uuid) execute function public.flip_partial()`)
      })
      // when
      const error = await turnlogRejection(ownStore.rebuild())
      // then the last session's batch was refused before its commit, naming it, and its row is still missing
      expect(error).toMatchObject({ code: 'CORRUPT_LOG', details: { sessionId: last } })
      expect(error.message).toMatch(/still differs from the fold/)
      expect(await liveRows(last)).toBe(1)
      // and the first batch (200 sessions, the first among them) committed its repair
      expect(await liveRows(first)).toBe(2)
    } finally {
      await ownStore.close()
      await own.drop()
    }
  })
})

/** A metric reader the test collects from on demand. */
class TestMetricReader extends MetricReader {
  protected override async onForceFlush(): Promise<void> {}
  protected override async onShutdown(): Promise<void> {}
}

/** In-memory tracer and meter providers. */
function providers(): {
  exporter: InMemorySpanExporter
  tracerProvider: TracerProvider
  meterProvider: MeterProvider
  metric: (name: string) => Promise<MetricData | undefined>
  scopes: () => Promise<string[]>
} {
  const exporter = new InMemorySpanExporter()
  const tracerProvider = new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] })
  const reader = new TestMetricReader()
  const meterProvider = new MeterProvider({ readers: [reader] })
  return {
    exporter,
    tracerProvider,
    meterProvider,
    metric: async (name) =>
      (await reader.collect()).resourceMetrics.scopeMetrics.flatMap((s) => s.metrics).find((m) => m.descriptor.name === name),
    scopes: async () => (await reader.collect()).resourceMetrics.scopeMetrics.map((s) => s.scope.name),
  }
}

/** The data points of a metric as [attributes, value] (a histogram's value: its count). */
function points(metric: MetricData | undefined): [Record<string, unknown>, number][] {
  return ((metric?.dataPoints ?? []) as DataPoint<number | Histogram>[]).map((p) => [
    { ...p.attributes },
    typeof p.value === 'number' ? p.value : p.value.count,
  ])
}

describe('Tracing and metrics (operations.md)', () => {
  let t: ReturnType<typeof providers>
  const ours = (): ReadableSpan[] => t.exporter.getFinishedSpans().filter((s) => s.name.startsWith('turnlog.'))
  /** What a span adds besides `db.system.name` and `db.operation.name`. */
  const added = (span: ReadableSpan | undefined): Record<string, unknown> => {
    const { 'db.system.name': _system, 'db.operation.name': _operation, ...rest } = span?.attributes ?? {}
    return rest
  }

  beforeAll(() => {
    t = providers()
    context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable())
    trace.setGlobalTracerProvider(t.tracerProvider)
    metrics.setGlobalMeterProvider(t.meterProvider)
  })
  afterAll(async () => {
    trace.disable()
    metrics.disable()
    context.disable()
    await t?.tracerProvider.shutdown()
    await t?.meterProvider.shutdown()
  })

  it('every call of the span table: one INTERNAL span turnlog.<method> with the documented attributes from its result', async () => {
    // given
    const partial = assistant('streaming…', { status: 'partial' })
    const [q, a, c] = [user('q'), assistant('a'), user('c')]
    t.exporter.reset()
    // when every call of the table runs once
    const s = await store.createSession()
    const appended = await store.append(s, [q, a, partial])
    const flushed = await store.flush(s, [q, a, partial, c])
    const info = await store.getSession(s)
    const page = await store.sessions({ limit: 2 })
    const loaded = await store.load(s)
    const state = await store.state(s)
    const transcript = await store.transcript(s)
    let events = 0
    for await (const _e of store.events(s)) events++
    const revised = await store.revise(s, a.id, { role: 'assistant', content: 'a, revised' })
    const finalized = await store.finalize(s, partial.id)
    const summary = user('summary of q')
    const compacted = await store.compact(s, { covered: [q.id], summary })
    const fresh = user('new in the list')
    const synced = await store.sync(s, [summary, createMessage({ role: 'assistant', content: 'a, again' }, { id: a.id }), fresh])
    const summary2 = user('summary of all')
    const syncedCompaction = await store.sync(s, [summary2, fresh], { compaction: { summaryIds: [summary2.id] } })
    const rewound = await store.rewind(s, { after: summary2.id })
    const fork = await store.fork(s, { at: summary2.id })
    const redacted = await store.redact(s, summary2.id)
    await turnlogRejection(store.append(s, [{ ...summary2, payload: { role: 'user', content: 'other' } }]))
    const conflicts = await store.conflicts(s)
    const rebuilt = await store.rebuild({ sessionId: s, verify: true })
    await store.oldestOpenTransaction({ scope: 'database' })
    // then one span per call, in call order (rebuild({ sessionId }) reads through getSession: no span of that)
    const spans = ours()
    expect(spans.map((x) => x.name)).toEqual(
      [
        'createSession',
        'append',
        'flush',
        'getSession',
        'sessions',
        'load',
        'state',
        'transcript',
        'events',
        'revise',
        'finalize',
        'compact',
        'sync',
        'sync',
        'rewind',
        'fork',
        'redact',
        'append',
        'conflicts',
        'rebuild',
        'oldestOpenTransaction',
      ].map((m) => `turnlog.${m}`),
    )
    for (const span of spans) {
      expect(span.kind).toBe(SpanKind.INTERNAL)
      expect(span.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.operation.name': span.name.slice('turnlog.'.length) })
    }
    const version = (r: { version: number }): Record<string, number> => ({ 'turnlog.session.version': r.version })
    const conv = { 'gen_ai.conversation.id': s }
    expect(spans.map(added)).toEqual([
      conv,
      { ...conv, ...version(appended), 'turnlog.messages.appended': 3, 'turnlog.messages.duplicates': 0 },
      { ...conv, ...version(flushed), 'turnlog.messages.appended': 1, 'turnlog.messages.duplicates': 3 },
      { ...conv, ...version(info) },
      { 'turnlog.sessions.count': page.sessions.length },
      { ...conv, ...version(loaded), 'turnlog.messages.count': loaded.messages.length },
      { ...conv, ...version(state) },
      { ...conv, ...version(transcript), 'turnlog.entries.count': transcript.entries.length },
      { ...conv, 'turnlog.events.count': events },
      { ...conv, ...version(revised), 'turnlog.message.revision': revised.revision, 'turnlog.unchanged': false },
      { ...conv, ...version(finalized), 'turnlog.message.revision': finalized.revision, 'turnlog.unchanged': false },
      { ...conv, ...version(compacted), 'turnlog.messages.summary': 1 },
      {
        ...conv,
        ...version(synced),
        'turnlog.messages.appended': synced.appended.length,
        'turnlog.messages.retracted': synced.retracted.length,
        'turnlog.messages.revised': synced.revised.length,
        'turnlog.messages.summary': 0,
      },
      {
        ...conv,
        ...version(syncedCompaction),
        'turnlog.messages.appended': 0,
        'turnlog.messages.retracted': 0,
        'turnlog.messages.revised': 0,
        'turnlog.messages.summary': 1,
      },
      { ...conv, ...version(rewound), 'turnlog.messages.retracted': rewound.retracted.length },
      { ...conv, 'turnlog.fork.session_id': fork },
      { ...conv, ...version(redacted), 'turnlog.sessions.count': redacted.sessions.length },
      { ...conv, 'error.type': 'MESSAGE_CONFLICT' },
      { ...conv, 'turnlog.conflicts.count': conflicts.length },
      {
        'turnlog.sessions.count': rebuilt.sessions,
        'turnlog.sessions.rewritten': rebuilt.rewritten,
        'turnlog.drift.count': rebuilt.drift.length,
      },
      {},
    ])
    // (the calls did what the counts say)
    expect([
      synced.appended.length,
      synced.retracted.length,
      synced.revised.length,
      rewound.retracted.length,
      redacted.sessions.length,
    ]).toEqual([1, 2, 1, 1, 2])
    expect(conflicts.length).toBe(1)
    expect(rebuilt).toMatchObject({ sessions: 1, rewritten: 0, drift: [] })
  })

  it('a failure: error.type is the code, `_OTHER` for an error that is no TurnlogError; gen_ai.conversation.id is cut at 64 characters', async () => {
    // given
    t.exporter.reset()
    // when a call fails with a TurnlogError on a long non-id, and a call fails with a plain Error (a throwing onProgress)
    await turnlogRejection(store.load('x'.repeat(100)))
    const plain = await store
      .rebuild({
        verify: true,
        onProgress: () => {
          throw new Error('the caller’s own failure')
        },
      })
      .catch((e: unknown) => e)
    // then
    expect(plain).toBeInstanceOf(Error)
    const [load, rebuild] = ours()
    expect(load?.attributes).toMatchObject({ 'gen_ai.conversation.id': 'x'.repeat(64), 'error.type': 'INVALID_INPUT' })
    expect(load?.status.code).toBe(SpanStatusCode.ERROR)
    expect(rebuild?.attributes['error.type']).toBe('_OTHER')
    expect(rebuild?.status.code).toBe(SpanStatusCode.ERROR)
    expect(rebuild?.events.map((e) => e.name)).toEqual(['exception'])
  })

  it('close, withTransaction, atomically, subscribe (its own reads too) and the getters make no span; the calls of a bound store do', async () => {
    // given
    const session = await store.createSession()
    await store.append(session, [user('for the subscription')])
    const other = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 2 } })
    t.exporter.reset()
    // when
    const handled: number[] = []
    const sub = store.subscribe({ name: 'ops-telemetry', from: 'start' }, (e) => void handled.push(e.seq))
    await sub.catchUp()
    await sub.stop()
    void [store.flavor, store.maxBatchBytes, store.db]
    await store.db.transaction().execute(async (trx) => {
      const bound = store.withTransaction(trx)
      await bound.append(session, [user('in the caller’s transaction')])
    })
    await store.atomically((tx) => tx.getSession(session))
    await other.close()
    // then only the bound stores' calls
    expect(handled.length).toBeGreaterThan(0)
    expect(ours().map((x) => x.name)).toEqual(['turnlog.append', 'turnlog.getSession'])
  })

  it('importSessions, findSessionIds and countConflicts make a span each (regression: none); a call of the same store inside a call adds none, another store’s is a child', async () => {
    // given a session, and a second store on the same database
    const session = await store.createSession()
    await store.append(session, [user('exported'), assistant('and imported')])
    const target = await openStore({ connectionString: db.connectionString, migrate: false, pool: { max: 2 } })
    try {
      t.exporter.reset()
      // when the second store imports the first one's export (read while it imports), and the lookups run
      const imported = await importEvents(target, exportSessions(store, { sessionIds: [session] }))
      const found = await store.findSessionIds(session.slice(-8))
      const counted = await store.countConflicts()
      await store.rebuild({ sessionId: session, verify: true, onProgress: () => void store.getSession(session) })
      // then
      const spans = ours()
      expect(spans.map((x) => x.name)).toEqual([
        'turnlog.getSession',
        'turnlog.events',
        'turnlog.importSessions',
        'turnlog.findSessionIds',
        'turnlog.countConflicts',
        'turnlog.rebuild',
      ])
      const [getSession, events, importSpan, find, count] = spans
      expect(added(importSpan)).toEqual({ 'turnlog.sessions.count': imported.sessions, 'turnlog.events.written': imported.eventsWritten })
      expect(added(find)).toEqual({ 'turnlog.sessions.count': found.length })
      expect(added(count)).toEqual({ 'turnlog.conflicts.count': counted })
      // the source store's reads, made while the import ran, are children of the import's span
      for (const child of [getSession, events]) expect(child?.parentSpanContext?.spanId).toBe(importSpan?.spanContext().spanId)
    } finally {
      await target.close()
    }
  })

  it('a group-commit statement is a driver span child of the first append it carries (regression: a group sent when the one before it returned was a child of that one’s first append)', async () => {
    // given instrumentation-pg (patched by hand: its require hook never sees jest's module loader), a
    // store with one append statement in flight whose replies are held 30 ms, so that appends queue up
    const grouped = await openStore({
      connectionString: db.connectionString,
      migrate: false,
      pool: { max: 4 },
      groupCommit: { maxInFlight: 1 },
    })
    const instrumentation = new PgInstrumentation({ enabled: false })
    const pgModule = instrumentation.getModuleDefinitions().find((d) => d.name === 'pg')
    pgModule?.patch?.(pg)
    const log = logStatements(db.name)
    log.hold = (st) => (isAppend(st) ? 30 : 0)
    try {
      const sessions: SessionId[] = []
      for (let i = 0; i < 12; i++) sessions.push(await grouped.createSession())
      t.exporter.reset()
      log.statements.length = 0
      // when twelve appends run at once, in several statements
      const firstAppend = grouped.append(sessions[0] as SessionId, [user('g0')])
      await new Promise((r) => setTimeout(r, 10))
      await Promise.all([firstAppend, ...sessions.slice(1).map((s, i) => grouped.append(s, [user(`g${i + 1}`)]))])
      // then each append statement's driver span is the child of an append span, one whose session the statement carries
      const sent = log.statements.filter(isAppend).map(appendedSessions)
      const finished = t.exporter.getFinishedSpans()
      const appendSpans = new Map(finished.filter((x) => x.name === 'turnlog.append').map((x) => [x.spanContext().spanId, x]))
      const statements = finished.filter(
        (x) => x.name.startsWith('pg.query') && /append_(batches|messages)/.test(JSON.stringify(x.attributes)),
      )
      expect(sent.length).toBeGreaterThan(1)
      expect(sent.some((g) => g.length > 1)).toBe(true)
      expect(statements).toHaveLength(sent.length)
      const parents = statements.map((st) => appendSpans.get(st.parentSpanContext?.spanId ?? '')?.attributes['gen_ai.conversation.id'])
      // (the driver spans end in statement order, as the log sent them): the first append each statement carries
      expect(parents).toEqual(sent.map((g) => g[0]))
    } finally {
      log.restore()
      pgModule?.unpatch?.(pg)
      await grouped.close()
    }
  })

  it('metrics: duration (s) with error.type on failure, appended per operation, conflicts by code, group size; one meter @turnlog/postgres; the outer call only', async () => {
    // given
    const session = await store.createSession()
    const m = user('m')
    await store.append(session, [m])
    const base = {
      appended: points(await t.metric('turnlog.messages.appended')),
      conflicts: points(await t.metric('turnlog.operation.conflicts')),
      duration: points(await t.metric('turnlog.operation.duration')),
    }
    const count = (ps: [Record<string, unknown>, number][], attrs: Record<string, unknown>): number =>
      ps.filter(([a]) => JSON.stringify(a) === JSON.stringify(attrs)).reduce((n, [, v]) => n + v, 0)
    // when
    await store.flush(session, [m, user('flushed')])
    await store.sync(session, [...(await store.load(session)).messages, user('synced')])
    await turnlogRejection(store.append(session, [{ ...m, payload: { role: 'user', content: 'changed' } }]))
    await turnlogRejection(store.append(session, [user('stale')], { expectedVersion: 0 }))
    await store.load(session, { at: 1 })
    // then
    const now = {
      appended: points(await t.metric('turnlog.messages.appended')),
      conflicts: points(await t.metric('turnlog.operation.conflicts')),
      duration: points(await t.metric('turnlog.operation.duration')),
    }
    const delta = (k: keyof typeof now, attrs: Record<string, unknown>): number => count(now[k], attrs) - count(base[k], attrs)
    expect([delta('appended', { 'db.operation.name': 'flush' }), delta('appended', { 'db.operation.name': 'sync' })]).toEqual([1, 1])
    expect([
      delta('conflicts', { 'db.operation.name': 'append', 'error.type': 'MESSAGE_CONFLICT' }),
      delta('conflicts', { 'db.operation.name': 'append', 'error.type': 'VERSION_CONFLICT' }),
    ]).toEqual([1, 1])
    expect(delta('duration', { 'db.operation.name': 'append', 'error.type': 'MESSAGE_CONFLICT' })).toBe(1)
    // load({ at }) reads through state: one measurement, the load's
    expect([delta('duration', { 'db.operation.name': 'load' }), delta('duration', { 'db.operation.name': 'state' })]).toEqual([2, 0])
    const units = await Promise.all(
      [
        'turnlog.operation.duration',
        'turnlog.messages.appended',
        'turnlog.messages.duplicates',
        'turnlog.operation.conflicts',
        'turnlog.group_commit.size',
      ].map(async (name) => (await t.metric(name))?.descriptor.unit),
    )
    expect(units).toEqual(['s', '{message}', '{message}', '{conflict}', '{batch}'])
    expect(points(await t.metric('turnlog.group_commit.size')).every(([a]) => Object.keys(a).length === 0)).toBe(true)
    expect(await t.scopes()).toContain('@turnlog/postgres')
  })
})

describe('Tracing and metrics without global providers (operations.md)', () => {
  it('telemetry: { tracer, meter } uses these, either alone too; a PostgresStore built directly traces once the api is loaded; group size: 1 for a lone append, nothing without group commit', async () => {
    // given no global provider, and a tracer and a meter of the caller's
    const mine = providers()
    const tracer = mine.tracerProvider.getTracer('mine')
    const meter = mine.meterProvider.getMeter('mine')
    const both = await openStore({ kysely: store.db, migrate: false, telemetry: { tracer, meter } })
    const onlyTracer = await openStore({ kysely: store.db, migrate: false, telemetry: { tracer } })
    const direct = new PostgresStore({ db: store.db, root: store.db, flavor: 'postgres', telemetry: { tracer } })
    const alone = await openStore({
      connectionString: db.connectionString,
      migrate: false,
      pool: { max: 1 },
      groupCommit: false,
      telemetry: { meter },
    })
    try {
      const session = await store.createSession()
      // when an append goes without group commit
      await alone.append(session, [user('alone')])
      // then it records no group size
      expect(points(await mine.metric('turnlog.group_commit.size'))).toEqual([])
      // when
      await both.append(session, [user('both')])
      await onlyTracer.load(session)
      await direct.getSession(session)
      // then every call went to the caller's tracer; the meter got the one store's measurements
      expect(mine.exporter.getFinishedSpans().map((x) => x.name)).toEqual(['turnlog.append', 'turnlog.load', 'turnlog.getSession'])
      expect(points(await mine.metric('turnlog.operation.duration'))).toEqual([[{ 'db.operation.name': 'append' }, 2]])
      const size = (await mine.metric('turnlog.group_commit.size'))?.dataPoints as DataPoint<Histogram>[] | undefined
      expect(size?.map((p) => [p.value.count, p.value.sum])).toEqual([[1, 1]])
      expect(mine.exporter.getFinishedSpans().every((x) => x.attributes['gen_ai.conversation.id'] === session)).toBe(true)
    } finally {
      await alone.close()
      await both.close()
      await onlyTracer.close()
      await direct.close()
      await mine.tracerProvider.shutdown()
      await mine.meterProvider.shutdown()
    }
  })
})
