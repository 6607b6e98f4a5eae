/**
 * Migrations as a non-superuser login without CREATEROLE (issue 13, item 14: the failure blamed the
 * schema, the CLI called the rolled-back migrations "Success", and an empty `turnlog` schema stayed
 * behind). The turnlog roles are cluster-wide and the shared test server already has them, so this file
 * starts a private throwaway cluster (initdb) where they do not exist yet.
 */
import { spawnSync } from 'node:child_process'
import { chownSync } from 'node:fs'
import { mkdtemp, rm } from 'node:fs/promises'
import { createServer } from 'node:net'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { isTurnlogError, type TurnlogError } from '@turnlog/core'
import { migrateToLatest, openStore, rolesSql, type PostgresStore } from '@turnlog/postgres'
import { createMessage } from '@turnlog/core'
import pg from 'pg'
import { runTurnlog } from './support/run-turnlog.js'

const SLOW = 240_000
let dir: string
let port: number
const asRoot = process.getuid?.() === 0

/** Runs a Postgres server binary, as the `postgres` OS user when the tests run as root (initdb refuses root). */
function server(binary: string, args: readonly string[]): void {
  const bin = join(spawnSync('pg_config', ['--bindir'], { encoding: 'utf8' }).stdout.trim() || '/usr/lib/postgresql/15/bin', binary)
  const run = asRoot
    ? spawnSync('runuser', ['-u', 'postgres', '--', bin, ...args], { encoding: 'utf8' })
    : spawnSync(bin, args, { encoding: 'utf8' })
  if (run.status !== 0) throw new Error(`${binary} failed (${String(run.status)}): ${run.stderr}${run.stdout}`)
}

async function freePort(): Promise<number> {
  const srv = createServer()
  await new Promise<void>((resolve) => srv.listen(0, '127.0.0.1', resolve))
  const { port: p } = srv.address() as { port: number }
  await new Promise<void>((resolve) => srv.close(() => resolve()))
  return p
}

const url = (user: string, database: string): string => `postgresql://${user}@127.0.0.1:${port}/${database}`

async function superuserSql(text: string, database = 'postgres'): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: url('postgres', database) })
  await client.connect()
  try {
    return await client.query(text)
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-roles-cluster-'))
  if (asRoot)
    chownSync(
      dir,
      Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim()),
      Number(spawnSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).stdout.trim()),
    )
  port = await freePort()
  server('initdb', ['-D', join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '-E', 'UTF8', '--locale=C', '--no-sync'])
  server('pg_ctl', [
    '-D',
    join(dir, 'data'),
    '-w',
    '-l',
    join(dir, 'log'),
    '-o',
    `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`,
    'start',
  ])
  // a login without CREATEROLE that owns its database: what a managed Postgres gives an application
  await superuserSql('create role app_owner login nosuperuser nocreaterole nocreatedb')
  await superuserSql('create database app owner app_owner')
  await superuserSql('create role app2_owner login nosuperuser nocreaterole nocreatedb')
  await superuserSql('create database app2 owner app2_owner')
  await superuserSql('create role app3_owner login nosuperuser nocreaterole nocreatedb')
  await superuserSql('create database app3 owner app3_owner')
  await superuserSql('create role app4_owner login nosuperuser nocreaterole nocreatedb')
  await superuserSql('create database app4 owner app4_owner')
}, SLOW)

afterAll(async () => {
  if (dir !== undefined) {
    try {
      server('pg_ctl', ['-D', join(dir, 'data'), '-m', 'immediate', 'stop'])
    } finally {
      await rm(dir, { recursive: true, force: true })
    }
  }
})

/** What migrating `store` throws (`undefined` when it succeeds). */
async function migrationError(store: PostgresStore): Promise<unknown> {
  return migrateToLatest(store.db).then(
    () => undefined,
    (e: unknown) => e,
  )
}

async function turnlogSchema(database: string): Promise<number> {
  return (await superuserSql("select count(*)::int as n from pg_namespace where nspname = 'turnlog'", database)).rows[0].n as number
}

describe('migrating as a login without CREATEROLE (regression, issue 13 item 14)', () => {
  it(
    'fails with MIGRATION_FAILED naming the roles step and its SQLSTATE, applies nothing, and leaves no schema behind',
    async () => {
      // given a fresh cluster without the turnlog roles, and the database owner's login
      const store = await openStore({ connectionString: url('app_owner', 'app'), migrate: false, pool: { max: 1 } })
      try {
        // when it migrates
        const error = await migrationError(store)
        // then the error names the real cause, nothing claims success, and the database is as it was
        expect(isTurnlogError(error, 'MIGRATION_FAILED')).toBe(true)
        const e = error as TurnlogError
        expect(e.details).toMatchObject({
          step: 'roles',
          sqlState: '42501',
          failed: '0001_create_schema',
          missingRoles: ['turnlog_owner', 'turnlog_writer', 'turnlog_reader'],
          role: 'app_owner',
        })
        expect(String(e.details?.['hint'])).toContain('turnlog migrate --roles-sql')
        expect(e.message).toMatch(/SQLSTATE 42501.*CREATEROLE.*nothing was applied/)
        expect(e.message).not.toMatch(/Success/)
        // (a first run is refused before kysely creates anything: no migration ran)
        expect((e.details?.['results'] as { status: string }[]).map((r) => r.status)).toEqual([
          'Error',
          ...Array((e.details?.['results'] as unknown[]).length - 1).fill('NotExecuted'),
        ])
        expect(await turnlogSchema('app')).toBe(0)
        expect((await superuserSql("select count(*)::int as n from pg_roles where rolname like 'turnlog%'")).rows[0].n).toBe(0)
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it(
    'several failing first runs at once all report the roles step and leave no schema behind',
    async () => {
      // given four stores of the login, each on its own connection
      const stores = await Promise.all(
        [1, 2, 3, 4].map(() => openStore({ connectionString: url('app_owner', 'app'), migrate: false, pool: { max: 1 } })),
      )
      try {
        // when they migrate at the same moment
        const errors = await Promise.all(
          stores.map((st) =>
            migrateToLatest(st.db).then(
              () => undefined,
              (e: unknown) => e,
            ),
          ),
        )
        // then every one fails on the roles step and the database is as it was
        expect(errors.map((e) => isTurnlogError(e, 'MIGRATION_FAILED') && (e.details?.['step'] as unknown))).toEqual([
          'roles',
          'roles',
          'roles',
          'roles',
        ])
        expect(await turnlogSchema('app')).toBe(0)
      } finally {
        await Promise.all(stores.map((st) => st.close()))
      }
    },
    SLOW,
  )

  it(
    'the CLI exits non-zero with the cause and the hint; after the DBA runs `migrate --roles-sql`, the same login migrates',
    async () => {
      // given the application's login
      const app = url('app_owner', 'app')
      // when it runs `turnlog migrate`
      const failed = await runTurnlog(['--database-url', app, 'migrate'])
      // then the CLI reports the failure, its SQLSTATE and what to do, and never "applied" or "Success"
      expect(failed.code).toBe(3)
      expect(failed.stderr).toMatch(/MIGRATION_FAILED/)
      expect(failed.stderr).toMatch(/42501/)
      expect(failed.stderr).toMatch(/turnlog migrate --roles-sql/)
      expect(`${failed.stdout}${failed.stderr}`).not.toMatch(/applied \d|Success/)
      expect(await turnlogSchema('app')).toBe(0)

      // when a DBA runs the SQL `--roles-sql` prints (it connects to nothing) and the login migrates again
      const printed = await runTurnlog(['--database-url', app, 'migrate', '--roles-sql'])
      expect(printed.code).toBe(0)
      expect(printed.stdout).toBe(rolesSql({ migrator: 'app_owner' }))
      expect(printed.stdout).toContain('grant turnlog_owner to "app_owner";')
      await superuserSql(printed.stdout, 'app')
      await superuserSql(printed.stdout, 'app') // idempotent
      const migrated = await runTurnlog(['--database-url', app, 'migrate', '--json'])
      const again = await runTurnlog(['--database-url', app, 'migrate'])

      // then it succeeds, reports what it applied, and the schema works
      expect(migrated.code).toBe(0)
      const result = migrated.json<{ applied: string[]; known: string[] }>()
      expect(result.applied).toEqual(result.known)
      expect(again.code).toBe(0)
      expect(again.stdout).toMatch(/schema is up to date/)
      const store = await openStore({ connectionString: app, migrate: false, pool: { max: 1 } })
      try {
        const sid = await store.createSession()
        await store.append(sid, [createMessage({ role: 'user', content: 'hello' })])
        expect((await store.load(sid)).messages.length).toBe(1)
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it(
    'when the roles exist but the login is not a member of turnlog_owner, the roles step says so, and the grant fixes it',
    async () => {
      // given the roles (made by the test before) and another database owner who is not a member
      const app2 = url('app2_owner', 'app2')
      const store = await openStore({ connectionString: app2, migrate: false, pool: { max: 1 } })
      try {
        // when it migrates
        const error = await migrationError(store)
        // then
        expect(isTurnlogError(error, 'MIGRATION_FAILED')).toBe(true)
        expect((error as TurnlogError).details).toMatchObject({ step: 'roles', sqlState: '42501', missingRoles: [], role: 'app2_owner' })
        // the hint names what is missing: the membership, not a role to create
        const hint = String((error as TurnlogError).details?.['hint'])
        expect(hint).toContain('app2_owner is not a member of turnlog_owner')
        expect(hint).not.toContain('creating cluster roles')
        expect(await turnlogSchema('app2')).toBe(0)
        // and after the DBA's SQL for this login it succeeds
        await superuserSql(rolesSql({ migrator: 'app2_owner' }), 'app2')
        const result = await migrateToLatest(store.db)
        expect(result.applied).toEqual(result.known)
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it(
    'inside the migration (a schema made beforehand), the roles step fails the run: nothing is reported applied, nothing is recorded',
    async () => {
      // given a login that is not a member of turnlog_owner, and a turnlog schema a DBA created for it
      await superuserSql('create schema turnlog authorization app3_owner', 'app3')
      const store = await openStore({ connectionString: url('app3_owner', 'app3'), migrate: false, pool: { max: 1 } })
      try {
        // when it migrates
        const error = await migrationError(store)
        // then the baseline's own roles step refused (the migrations before a failing one are reported
        // RolledBack: see migrate-failure.test.ts in @turnlog/postgres)
        expect(isTurnlogError(error, 'MIGRATION_FAILED')).toBe(true)
        const e = error as TurnlogError
        expect(e.details).toMatchObject({ step: 'roles', sqlState: '42501', failed: '0001_create_schema', role: 'app3_owner' })
        expect((e.details?.['results'] as { status: string }[]).slice(0, 1).map((r) => r.status)).toEqual(['Error'])
        expect(e.message).not.toMatch(/Success/)
        // and the schema it found stays, holding no migration and no turnlog table
        const left = await superuserSql(
          `select (select count(*)::int from turnlog.schema_migrations) as recorded,
        (select count(*)::int from pg_tables where schemaname = 'turnlog' and tablename not like 'schema_migrations%') as tables`,
          'app3',
        )
        expect(left.rows[0]).toEqual({ recorded: 0, tables: 0 })
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it(
    'a first run that fails after kysely made its bookkeeping schema leaves no schema behind',
    async () => {
      // given a login that may migrate (roles exist, it is a member) and a database where CREATE FUNCTION fails
      await superuserSql('grant turnlog_owner to app4_owner')
      await superuserSql(
        `create function public.refuse_functions() returns event_trigger language plpgsql as $$
      begin raise exception 'no functions here' using errcode = 'P0001'; end $$`,
        'app4',
      )
      await superuserSql(
        `create event trigger refuse_functions on ddl_command_start when tag in ('CREATE FUNCTION')
      execute function public.refuse_functions()`,
        'app4',
      )
      const store = await openStore({ connectionString: url('app4_owner', 'app4'), migrate: false, pool: { max: 1 } })
      try {
        // when it migrates: kysely creates the turnlog schema and its tables, then 0001 fails
        const error = await migrationError(store)
        // then the error names 0001 and the SQLSTATE, and the schema kysely made is gone
        expect(isTurnlogError(error, 'MIGRATION_FAILED')).toBe(true)
        expect((error as TurnlogError).details).toMatchObject({
          step: '0001_create_schema',
          failed: '0001_create_schema',
          sqlState: 'P0001',
        })
        expect(await turnlogSchema('app4')).toBe(0)
        // and once the obstacle is gone the same login migrates
        await superuserSql('drop event trigger refuse_functions', 'app4')
        const result = await migrateToLatest(store.db)
        expect(result.applied).toEqual(result.known)
      } finally {
        await store.close()
      }
    },
    SLOW,
  )
})
