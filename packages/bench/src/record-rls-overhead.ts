import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import type { BenchContext } from './bench-context.js'
import { databaseUrl } from './database-url.js'
import { interleaved } from './interleaved.js'
import { record } from './record.js'
import { summarize } from './stats.js'

/** The three ways a store can meet row level security, measured side by side. */
const CONFIGS = ['disabled', 'bypass', 'tenant'] as const
type Config = (typeof CONFIGS)[number]

const TABLES = ['sessions', 'events', 'live_messages', 'conflicts', 'tenant_roles', 'message_ids']

/**
 * What row level security costs (docs/security.md): per-turn appends (batches of 5) and loads of a
 * 1,000-message session through three stores, interleaved run by run: the schema with row level security
 * disabled on its tables, the schema through a role that bypasses it (the owner), and a tenant-mapped
 * `turnlog_writer` login (every policy applies). Two rows: the tenant writer against RLS disabled.
 */
export async function recordRlsOverhead(ctx: BenchContext): Promise<void> {
  const { args, admin } = ctx
  const appends = args.quick ? 100 : 300
  const loads = args.quick ? 20 : 60
  const loadSize = 1000
  const names: Record<'off' | 'on', string> = { off: `${ctx.dbName}_rls_off`, on: `${ctx.dbName}_rls_on` }
  const role = `${ctx.dbName}_rls_writer`
  const password = randomBytes(12).toString('hex')
  const stores: Partial<Record<Config, PostgresStore>> = {}
  try {
    for (const name of Object.values(names)) {
      await admin.query(`create database ${name}`)
      ctx.extraDatabases.push(name)
    }
    const offUrl = databaseUrl(args.adminUrl, names.off)
    const onUrl = databaseUrl(args.adminUrl, names.on)
    stores.disabled = await openStore({ connectionString: offUrl, pool: { max: 2 } })
    await onDatabase(offUrl, (c) => c.query(TABLES.map((t) => `alter table turnlog.${t} disable row level security;`).join('\n')))
    stores.bypass = await openStore({ connectionString: onUrl, pool: { max: 2 } })
    await admin.query(`create role ${role} login password '${password}' in role turnlog_writer`)
    await onDatabase(onUrl, (c) =>
      c.query('insert into turnlog.tenant_roles (role_name, tenant_id) values ($1, $2)', [role, 'bench-tenant']),
    )
    const tenantUrl = new URL(onUrl)
    tenantUrl.username = role
    tenantUrl.password = password
    stores.tenant = await openStore({ connectionString: tenantUrl.toString(), migrate: false, pool: { max: 2 } })

    const sessions = {} as Record<Config, { appendTo: SessionId; load: SessionId }>
    for (const config of CONFIGS) {
      const store = storeOf(stores, config)
      const options = config === 'disabled' ? {} : { tenantId: 'bench-tenant' }
      const appendTo = await store.createSession(options)
      const load = await store.createSession(options)
      for (let i = 0; i < loadSize / 100; i++) {
        await store.append(
          load,
          Array.from({ length: 100 }, (_, k) => createMessage({ role: 'user', content: `m${i}-${k} ${'x'.repeat(200)}` })),
        )
      }
      sessions[config] = { appendTo, load }
      await store.append(appendTo, turn(-1))
      await store.load(load)
    }
    for (const url of [offUrl, onUrl]) await onDatabase(url, (c) => c.query('analyze'))

    const appendMs: Record<Config, number[]> = { disabled: [], bypass: [], tenant: [] }
    const loadMs: Record<Config, number[]> = { disabled: [], bypass: [], tenant: [] }
    for (let run = 0; run < args.runs; run++) {
      await interleaved(
        run,
        CONFIGS.map((config) => async () => {
          const store = storeOf(stores, config)
          const t0 = performance.now()
          for (let i = 0; i < appends; i++) await store.append(sessions[config].appendTo, turn(i))
          appendMs[config].push((performance.now() - t0) / appends)
          const t1 = performance.now()
          for (let i = 0; i < loads; i++) {
            const loaded = await store.load(sessions[config].load)
            if (loaded.messages.length !== loadSize) throw new Error(`rls ${config}: loaded ${loaded.messages.length} messages`)
          }
          loadMs[config].push((performance.now() - t1) / loads)
        }),
      )
    }
    const bypass = (values: readonly number[]): string => `${summarize(values).median.toFixed(2)} ms`
    record({
      workload: 'row level security: per-turn append (5 messages), tenant writer',
      unit: 'ms/append',
      turnlog: summarize(appendMs.tenant),
      baseline: summarize(appendMs.disabled),
      baselineName: 'the same schema with row level security disabled',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: false,
      notes: `${appends} sequential appends per run and store; through the owner (RLS bypassed) ${bypass(appendMs.bypass)}`,
    })
    record({
      workload: `row level security: load of a ${loadSize}-message session, tenant writer`,
      unit: 'ms/load',
      turnlog: summarize(loadMs.tenant),
      baseline: summarize(loadMs.disabled),
      baselineName: 'the same schema with row level security disabled',
      goal: 'reported',
      goalRatio: null,
      higherIsBetter: false,
      notes: `${loads} sequential loads per run and store; through the owner (RLS bypassed) ${bypass(loadMs.bypass)}`,
    })
  } finally {
    for (const store of Object.values(stores)) await store.close()
    for (const name of Object.values(names)) await admin.query(`drop database if exists ${name} with (force)`)
    await admin.query(`drop role if exists ${role}`)
  }
}

function storeOf(stores: Partial<Record<Config, PostgresStore>>, config: Config): PostgresStore {
  const store = stores[config]
  if (store === undefined) throw new Error(`rls: no ${config} store`)
  return store
}

function turn(i: number): Message[] {
  return Array.from({ length: 5 }, (_, k) =>
    createMessage({ role: k % 2 === 0 ? 'user' : 'assistant', content: `turn ${i} part ${k}: ${'lorem ipsum '.repeat(8)}` }),
  )
}

async function onDatabase<T>(url: string, task: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await task(client)
  } finally {
    await client.end()
  }
}
