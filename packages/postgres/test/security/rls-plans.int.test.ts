import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { createLoginRole, dropLoginRoles, runSql, type LoginRole } from './support/security-fixtures.js'

/**
 * Row level security must not cost an index: a policy that defeats one turns a primary-key probe into a
 * scan of the whole log, 10-100× slower. What it costs in time is measured by the bench (`--only rls`,
 * docs/security.md); here the same workload runs through the schema with row level security disabled and
 * through a tenant-mapped writer (every policy applies), on connections with `enable_seqscan = off`: the
 * planner then scans a whole table only where no index can serve the query. The server's own counters must
 * show the writer's appends, re-sends and loads using indexes only, as without row level security: no
 * sequential scan of the log, the projection or the id arbiter.
 */

const LOG_TABLES = ['events', 'live_messages', 'message_ids'] as const
const APPENDS = 40
const LOADS = 20

let plain: TestDatabase
let tenant: TestDatabase
let writerRole: LoginRole

beforeAll(async () => {
  plain = await createTestDatabase()
  tenant = await createTestDatabase()
  const owner = await openStore({ connectionString: tenant.connectionString })
  await owner.close()
  writerRole = await createLoginRole(tenant, 'plans', { groups: ['turnlog_writer'], tenant: 'plans-tenant' })
})

afterAll(async () => {
  await plain?.drop()
  await tenant?.drop()
  if (writerRole) await dropLoginRoles([writerRole])
})

const turn = (i: number): Message[] =>
  Array.from({ length: 5 }, (_, k) =>
    createMessage({ role: k % 2 === 0 ? 'user' : 'assistant', content: `turn ${i} part ${k}: ${'lorem ipsum '.repeat(8)}` }),
  )

interface ScanCounts {
  readonly seq: Record<string, number>
  readonly idx: Record<string, number>
}

/** The database's scan counters of the log tables, as the server holds them. */
async function scans(db: TestDatabase): Promise<ScanCounts> {
  const rows = await runSql<{ relname: string; seq_scan: string; idx_scan: string | null }>(
    db.connectionString,
    `select relname, seq_scan, idx_scan from pg_stat_user_tables where schemaname = 'turnlog' and relname = any ($1)`,
    [LOG_TABLES],
  )
  const seq: Record<string, number> = {}
  const idx: Record<string, number> = {}
  for (const r of rows) {
    seq[r.relname] = Number(r.seq_scan)
    idx[r.relname] = Number(r.idx_scan ?? 0)
  }
  return { seq, idx }
}

/**
 * Fills a session through one store and closes it, then runs the workload through a second store opened
 * by `open` and closes that too: a backend flushes its counters when it exits, so the counters read
 * before and after the workload (once they stop moving) hold the workload's scans and nothing else.
 */
async function workload(db: TestDatabase, open: () => Promise<PostgresStore>, tenantId: string | undefined): Promise<ScanCounts> {
  const options = tenantId === undefined ? {} : { tenantId }
  const setup = await open()
  const appendTo = await setup.createSession(options)
  const loadFrom = await setup.createSession(options)
  let last: Message | undefined
  for (let i = 0; i < 10; i++) {
    const batch = Array.from({ length: 100 }, (_, k) => createMessage({ role: 'user', content: `m${i}-${k} ${'x'.repeat(200)}` }))
    last = batch[batch.length - 1]
    await setup.append(loadFrom, batch)
  }
  // rewound, so its loads read the projection (a session of plain appends is read from its events alone)
  await setup.rewind(loadFrom, { from: (last as Message).id })
  await setup.close()
  await runSql(db.connectionString, 'analyze')
  const before = await settledScans(db)
  const store = await open()
  const sent: Message[][] = []
  for (let i = 0; i < APPENDS; i++) {
    const batch = turn(i)
    sent.push(batch)
    await store.append(appendTo, batch)
  }
  for (const batch of sent.slice(0, 10)) expect((await store.append(appendTo, batch)).appended).toEqual([])
  for (let i = 0; i < LOADS; i++) expect((await store.load(loadFrom)).messages).toHaveLength(999)
  expect((await store.load(appendTo)).messages).toHaveLength(APPENDS * 5)
  await store.close()
  const after = await settledScans(db)
  const diff = (a: Record<string, number>, b: Record<string, number>): Record<string, number> =>
    Object.fromEntries(LOG_TABLES.map((t) => [t, (a[t] ?? 0) - (b[t] ?? 0)]))
  return { seq: diff(after.seq, before.seq), idx: diff(after.idx, before.idx) }
}

/** The counters once two reads 300 ms apart agree (backends that just exited have flushed theirs). */
async function settledScans(db: TestDatabase): Promise<ScanCounts> {
  let last = await scans(db)
  for (let i = 0; i < 30; i++) {
    await new Promise((r) => setTimeout(r, 300))
    const now = await scans(db)
    if (JSON.stringify(now) === JSON.stringify(last)) return now
    last = now
  }
  return last
}

it('a tenant writer appends, re-sends and loads through the same indexes as the schema without row level security', async () => {
  // given the schema with row level security disabled on its tables, and the same schema through a tenant writer
  await (await openStore({ connectionString: plain.connectionString })).close()
  await runSql(
    plain.connectionString,
    ['sessions', 'events', 'live_messages', 'conflicts', 'tenant_roles', 'message_ids']
      .map((t) => `alter table turnlog.${t} disable row level security;`)
      .join('\n'),
  )
  const open = (url: string) => () => openStore({ connectionString: noSeqScan(url), migrate: false, pool: { max: 2 } })

  // when each runs the same appends, re-sends and loads
  const withoutRls = await workload(plain, open(plain.connectionString), undefined)
  const withRls = await workload(tenant, open(writerRole.connectionString), 'plans-tenant')

  // then both used indexes only: row level security left every query an index path
  const noScans = { events: 0, live_messages: 0, message_ids: 0 }
  expect(withoutRls.seq).toEqual(noScans)
  expect(withRls.seq).toEqual(noScans)
  for (const counts of [withoutRls, withRls]) {
    expect(counts.idx['events']).toBeGreaterThan(0)
    expect(counts.idx['live_messages']).toBeGreaterThan(0)
  }
})

/** `url` with the planner told to avoid sequential scans wherever an index can serve. */
function noSeqScan(url: string): string {
  const u = new URL(url)
  u.searchParams.set('options', '-c enable_seqscan=off')
  return u.toString()
}
