import { afterAll, beforeAll, expect, it } from '@jest/globals'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'
import { createLoginRole, dropLoginRoles, type LoginRole } from './support/security-fixtures.js'

/**
 * Append and load rates in one run: the schema with row level security disabled on its tables, the
 * schema as migrated through a role that bypasses RLS (the owner / a superuser), and through a
 * tenant-mapped writer (every policy applies). Prints the table docs/security.md quotes; asserts only loose bounds that
 * catch a pathological plan (a policy that defeats an index costs 10-100x, not 1.3x).
 */

const APPENDS = 150
const BATCH = 5
const LOAD_SIZE = 1000
const LOADS = 30

let before: TestDatabase
let after: TestDatabase
let writerRole: LoginRole
const stores: Record<'before' | 'bypass' | 'rls', PostgresStore | undefined> = { before: undefined, bypass: undefined, rls: undefined }

beforeAll(async () => {
  before = await createTestDatabase()
  after = await createTestDatabase()
  stores.before = await openStore({ connectionString: before.connectionString, pool: { max: 2 } })
  // the same schema without row level security: what the policies cost, and nothing else
  await sql`alter table turnlog.sessions disable row level security; alter table turnlog.events disable row level security;
    alter table turnlog.live_messages disable row level security; alter table turnlog.conflicts disable row level security;
    alter table turnlog.tenant_roles disable row level security; alter table turnlog.message_ids disable row level security`.execute(
    stores.before.db,
  )
  stores.bypass = await openStore({ connectionString: after.connectionString, pool: { max: 2 } })
  writerRole = await createLoginRole(after, 'perf', { groups: ['turnlog_writer'], tenant: 'perf-tenant' })
  stores.rls = await openStore({ connectionString: writerRole.connectionString, migrate: false, pool: { max: 2 } })
})

afterAll(async () => {
  for (const s of Object.values(stores)) await s?.close()
  await before?.drop()
  await after?.drop()
  if (writerRole) await dropLoginRoles([writerRole])
})

function store(name: keyof typeof stores): PostgresStore {
  const s = stores[name]
  if (!s) throw new Error(`no store ${name}`)
  return s
}

const batch = (i: number): Message[] =>
  Array.from({ length: BATCH }, (_, k) =>
    createMessage({ role: k % 2 === 0 ? 'user' : 'assistant', content: `turn ${i} part ${k}: ${'lorem ipsum '.repeat(8)}` }),
  )

it('measures append and load with and without row level security in the same run', async () => {
  // given one tenant session per configuration, and a long session to load
  const names = ['before', 'bypass', 'rls'] as const
  const sessions = {} as Record<(typeof names)[number], { appendTo: SessionId; load: SessionId }>
  for (const n of names) {
    const tenantId = n === 'before' ? undefined : 'perf-tenant'
    const appendTo = await store(n).createSession(tenantId === undefined ? {} : { tenantId })
    const load = await store(n).createSession(tenantId === undefined ? {} : { tenantId })
    for (let i = 0; i < LOAD_SIZE / 100; i++)
      await store(n).append(
        load,
        Array.from({ length: 100 }, (_, k) => createMessage({ role: 'user', content: `m${i}-${k} ${'x'.repeat(200)}` })),
      )
    sessions[n] = { appendTo, load }
    // warm-up: plans cached, connections open
    await store(n).append(appendTo, batch(-1))
    await store(n).load(load)
  }
  for (const n of names) await sql`analyze`.execute(store(n === 'rls' ? 'bypass' : n).db)

  // when each configuration appends and loads, interleaved in rounds so drift hits all alike
  const appendMs = { before: 0, bypass: 0, rls: 0 }
  const loadMs = { before: 0, bypass: 0, rls: 0 }
  const rounds = 5
  for (let r = 0; r < rounds; r++) {
    for (const n of names) {
      const t0 = performance.now()
      for (let i = 0; i < APPENDS / rounds; i++) await store(n).append(sessions[n].appendTo, batch(i))
      appendMs[n] += performance.now() - t0
      const t1 = performance.now()
      for (let i = 0; i < LOADS / rounds; i++) {
        const loaded = await store(n).load(sessions[n].load)
        if (loaded.messages.length !== LOAD_SIZE) throw new Error(`${n}: loaded ${loaded.messages.length}`)
      }
      loadMs[n] += performance.now() - t1
    }
  }

  // then: report, and every configuration stays within a small factor of the schema without row level security
  const rows = names.map((n) => ({
    config: n,
    'appends/s': Math.round((APPENDS / appendMs[n]) * 1000),
    'ms/append': +(appendMs[n] / APPENDS).toFixed(2),
    [`loads/s (${LOAD_SIZE} msgs)`]: Math.round((LOADS / loadMs[n]) * 1000),
    'ms/load': +(loadMs[n] / LOADS).toFixed(2),
  }))
  console.log(`RLS overhead (append batch ${BATCH}, load ${LOAD_SIZE} messages)\n${JSON.stringify(rows, null, 1)}`)
  for (const n of ['bypass', 'rls'] as const) {
    expect(appendMs[n] / appendMs.before).toBeLessThan(3)
    expect(loadMs[n] / loadMs.before).toBeLessThan(3)
  }
  expect((await store('rls').getSession(sessions.rls.appendTo)).version).toBe(APPENDS * BATCH + BATCH)
})
