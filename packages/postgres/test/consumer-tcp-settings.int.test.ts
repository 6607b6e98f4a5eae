/**
 * docs/subscriptions.md, "One consumer per name, takeover": a consumer's session asks the server for
 * `tcp_keepalives_idle = 10`, `tcp_keepalives_interval = 5`, `tcp_keepalives_count = 3` and
 * `tcp_user_timeout = 25000`, each one unless the server, database or role sets that one. Before, the
 * rule was all or none: a database that set only the keep-alive left the consumer without
 * `tcp_user_timeout`, and a holder that vanished with a reply or a notification in flight kept the name's
 * lock for the kernel's retransmission time (≈ 15 min). The fault itself (a link cut) is in
 * faults/dead-consumer-keepalive.int.test.ts; this file reads the settings the consumer's session runs
 * with, through a transactional handler (it runs on that session).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { sql } from 'kysely'

const NAMES = ['tcp_keepalives_idle', 'tcp_keepalives_interval', 'tcp_keepalives_count', 'tcp_user_timeout'] as const

/** What `current_setting` reports for each of the four on a consumer session. */
type TcpSettings = Record<(typeof NAMES)[number], string>

const CONSUMER_DEFAULTS: TcpSettings = {
  tcp_keepalives_idle: '10',
  tcp_keepalives_interval: '5',
  tcp_keepalives_count: '3',
  tcp_user_timeout: '25000',
}

let db: TestDatabase
let store: PostgresStore
let round = 0

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  store = await openStore({ connectionString: db.connectionString, migrate: false })
  const session = await store.createSession()
  await store.append(session, [createMessage({ role: 'user', content: 'one event to deliver' })])
})

afterAll(async () => {
  await store?.close()
  await db?.drop()
})

/** Sets (or, with `null`, resets) each named setting on the test database, for sessions opened after. */
async function databaseSets(settings: Partial<Record<(typeof NAMES)[number], string | null>>): Promise<void> {
  for (const name of NAMES) {
    const value = settings[name]
    const statement = value === undefined || value === null ? `reset ${name}` : `set ${name} = ${value}`
    await sql.raw(`alter database "${db.name}" ${statement}`).execute(store.db)
  }
}

/** Runs a transactional consumer from the start and returns what its own session reports. */
async function consumerSettings(): Promise<TcpSettings & { tcp: boolean }> {
  const seen: (TcpSettings & { tcp: boolean })[] = []
  const sub = store.subscribe(
    { name: `tcp-settings-${++round}`, from: 'start' },
    async (_event, { transaction }) => {
      if (transaction === undefined) throw new Error('a transactional handler gets its transaction')
      const { rows } = await sql<TcpSettings & { tcp: boolean }>`
        select current_setting('tcp_keepalives_idle') as tcp_keepalives_idle,
               current_setting('tcp_keepalives_interval') as tcp_keepalives_interval,
               current_setting('tcp_keepalives_count') as tcp_keepalives_count,
               current_setting('tcp_user_timeout') as tcp_user_timeout,
               inet_client_addr() is not null as tcp`.execute(transaction)
      seen.push(rows[0]!)
    },
    { transactional: true },
  )
  try {
    await sub.catchUp()
  } finally {
    await sub.stop()
  }
  expect(seen.length).toBeGreaterThan(0)
  // over a Unix socket the server reports 0 for all four: these cases need the TCP connection the tests use
  expect(seen[0]!.tcp).toBe(true)
  return seen[0]!
}

describe("a consumer session's TCP settings (subscriptions.md: one consumer per name, takeover)", () => {
  it("are the consumer's four where the server, database and role set none", async () => {
    await databaseSets({})
    expect(await consumerSettings()).toEqual({ ...CONSUMER_DEFAULTS, tcp: true })
  })

  it("keep the database's keep-alive and add the consumer's tcp_user_timeout where the database sets only the keep-alive", async () => {
    // given an operator who shortened the keep-alive and did not know about tcp_user_timeout
    await databaseSets({ tcp_keepalives_idle: '7', tcp_keepalives_interval: '2', tcp_keepalives_count: '4' })
    // then the consumer keeps those, and still bounds unacknowledged data (the case the keep-alive cannot see)
    expect(await consumerSettings()).toEqual({
      tcp_keepalives_idle: '7',
      tcp_keepalives_interval: '2',
      tcp_keepalives_count: '4',
      tcp_user_timeout: '25000',
      tcp: true,
    })
  })

  it('leave each setting the database sets, whatever its value, and set only the others', async () => {
    await databaseSets({ tcp_keepalives_idle: '600', tcp_user_timeout: '0' })
    expect(await consumerSettings()).toEqual({
      tcp_keepalives_idle: '600',
      tcp_keepalives_interval: '5',
      tcp_keepalives_count: '3',
      tcp_user_timeout: '0',
      tcp: true,
    })
  })

  it('are all the database’s where it sets all four', async () => {
    await databaseSets({ tcp_keepalives_idle: '30', tcp_keepalives_interval: '3', tcp_keepalives_count: '2', tcp_user_timeout: '9000' })
    expect(await consumerSettings()).toEqual({
      tcp_keepalives_idle: '30',
      tcp_keepalives_interval: '3',
      tcp_keepalives_count: '2',
      tcp_user_timeout: '9000',
      tcp: true,
    })
  })
})
