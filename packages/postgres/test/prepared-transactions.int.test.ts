/**
 * Prepared (two-phase) transactions, docs/subscriptions.md "Monitoring": `store.oldestOpenTransaction()`
 * reports one with `pid: null`, `state: 'prepared'` and its gid as `query`, and a prepared transaction,
 * like any open one with a transaction id, holds subscription delivery back until COMMIT PREPARED or
 * ROLLBACK PREPARED ends it (it has no session: no `pg_terminate_backend`, no
 * `idle_in_transaction_session_timeout` ends it).
 *
 * `PREPARE TRANSACTION` needs `max_prepared_transactions > 0`, which the shared test server may not
 * have (its default is 0): the file starts a private cluster with it (PostgreSQL binaries under
 * /usr/lib/postgresql/<version>/bin, as `resolveTestServer`'s fallback uses), or else uses the run's
 * server when that allows two-phase commit, or fails saying what is missing. Never skipped.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore, type SubscribedEvent, type Subscription } from '@turnlog/postgres'
import {
  TEST_ADMIN_URL_ENV,
  createTestDatabase,
  findPostgresBinDir,
  migrateByOpening,
  startPrivateCluster,
  type TestDatabase,
} from '@turnlog/testing'
import { sql } from 'kysely'
import pg from 'pg'
import { waitFor as waitUntil } from './support/subscription-support.js'

/** A server on which `PREPARE TRANSACTION` works, and whether this file has it to itself. */
interface TwoPhaseServer {
  readonly adminUrl: string
  /** True for a private cluster: no other test file's transaction is in it. */
  readonly own: boolean
  stop(): Promise<void>
}

/** `max_prepared_transactions` of the server at `url`. */
async function maxPreparedTransactions(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 10_000 })
  client.on('error', () => {})
  await client.connect()
  try {
    const { rows } = await client.query<{ max_prepared_transactions: string }>('show max_prepared_transactions')
    return Number(rows[0]?.max_prepared_transactions)
  } finally {
    await client.end().catch(() => {})
  }
}

/** A private cluster with `max_prepared_transactions = 4`, else the run's server if it allows 2PC; else throws why not. */
async function twoPhaseServer(): Promise<TwoPhaseServer> {
  if (findPostgresBinDir() !== undefined) {
    const cluster = await startPrivateCluster({ settings: { max_prepared_transactions: 4 } })
    return { adminUrl: cluster.adminUrl, own: true, stop: cluster.stop }
  }
  const runServer = process.env[TEST_ADMIN_URL_ENV]
  const runMax = runServer === undefined || runServer === '' ? undefined : await maxPreparedTransactions(runServer)
  if (runServer !== undefined && runMax !== undefined && runMax > 0) return { adminUrl: runServer, own: false, stop: async () => {} }
  throw new Error(
    [
      'prepared-transactions.int.test.ts needs a Postgres server with max_prepared_transactions > 0 (PREPARE TRANSACTION fails otherwise):',
      '  - there are no PostgreSQL binaries under /usr/lib/postgresql/<version>/bin to start a private cluster with it, and',
      `  - the run's server (${TEST_ADMIN_URL_ENV}) has max_prepared_transactions = ${String(runMax)}.`,
      'Install the PostgreSQL server package, or start the test server with `-c max_prepared_transactions=10`',
      '(the docker-compose.yml at the repository root does).',
    ].join('\n'),
  )
}

let server: TwoPhaseServer | undefined
let db: TestDatabase | undefined
let store: PostgresStore | undefined
/** Sessions of plain connections to the test database (the prepared transactions' sessions). */
const clients: pg.Client[] = []

beforeAll(async () => {
  server = await twoPhaseServer()
  db = await createTestDatabase({ adminUrl: server.adminUrl, migrate: migrateByOpening })
  store = await openStore({ connectionString: db.connectionString, migrate: false })
}, 60_000)

/**
 * Rolls back the prepared transactions a failed test left: one outlives its session, and would hold
 * the next test's delivery back, block DROP DATABASE and (on a shared server) hold every subscriber back.
 */
async function rollBackLeftovers(): Promise<void> {
  if (db === undefined) return
  const admin = await connect()
  const { rows } = await admin.query<{ gid: string }>('select gid from pg_prepared_xacts where database = current_database()')
  for (const { gid } of rows) await admin.query(`rollback prepared '${gid}'`)
}

afterEach(rollBackLeftovers)

afterAll(async () => {
  await rollBackLeftovers()
  for (const client of clients) await client.end().catch(() => {})
  await store?.close()
  await db?.drop()
  await server?.stop()
})

/** A new session on the test database. */
async function connect(): Promise<pg.Client> {
  const client = new pg.Client({ connectionString: db!.connectionString })
  client.on('error', () => {})
  await client.connect()
  clients.push(client)
  return client
}

const msg = (content: string): Message => createMessage({ role: 'user', content })

/**
 * Prepares a transaction with gid `gid` on a connection of the store's pool; with `append`, the
 * transaction first appends that message to `session` through `store.withTransaction`, with
 * `turnlog.notify` off in it (a transaction that notified cannot be prepared) unless `notify` is true.
 * Returns its xid. On a failure the transaction is rolled back and the error rethrown.
 */
async function prepare(gid: string, append?: { session: SessionId; message: Message; notify?: boolean }): Promise<string> {
  const trx = await store!.db.startTransaction().execute()
  try {
    if (append !== undefined) {
      if (append.notify !== true) await sql`select set_config('turnlog.notify', 'off', true)`.execute(trx)
      await store!.withTransaction(trx).append(append.session, [append.message])
    }
    const { rows } = await sql<{ xid: string }>`select pg_current_xact_id()::text as xid`.execute(trx)
    await sql.raw(`prepare transaction '${gid}'`).execute(trx)
    // the session is out of the transaction now: this COMMIT is a no-op (a warning) that frees the connection
    await trx.commit().execute()
    return rows[0]!.xid
  } catch (error) {
    await trx.rollback().execute()
    throw error
  }
}

async function finish(gid: string, how: 'commit' | 'rollback'): Promise<void> {
  const client = await connect()
  await client.query(`${how} prepared '${gid}'`)
}

/** The oldest open transaction as this file may count on it: cluster-wide on its own server, else this database's. */
function oldest(): ReturnType<PostgresStore['oldestOpenTransaction']> {
  return store!.oldestOpenTransaction(server!.own ? {} : { scope: 'database' })
}

const waitFor = (what: string, predicate: () => boolean | Promise<boolean>, subscriptions: readonly Subscription[] = []): Promise<void> =>
  waitUntil(what, predicate, 30_000, store, subscriptions)

describe('a prepared (two-phase) transaction', () => {
  it("is the oldest open transaction with pid null, state 'prepared', its gid as query, its xid and database; gone once committed", async () => {
    // given nothing open
    expect(await oldest()).toBeNull()

    // when a transaction is prepared
    const xid = await prepare('turnlog-2pc-monitoring')

    // then it is reported, both cluster-wide (its own server) and for this database
    const expected = {
      pid: null,
      state: 'prepared',
      query: 'turnlog-2pc-monitoring',
      xid,
      database: db!.name,
      applicationName: null,
    }
    expect(await oldest()).toMatchObject(expected)
    expect(await store!.oldestOpenTransaction({ scope: 'database' })).toMatchObject(expected)
    const { ageMs } = (await oldest())!
    expect(ageMs).toBeGreaterThanOrEqual(0)
    expect(ageMs).toBeLessThan(60_000)

    // when a later transaction with an xid is open in a session too
    const later = await connect()
    await later.query('begin')
    const { rows } = await later.query<{ xid: string }>('select pg_current_xact_id()::text as xid')

    // then the prepared one, older, is still the oldest
    expect(await oldest()).toMatchObject({ pid: null, state: 'prepared', xid })

    // when it is committed, the session's transaction is the oldest; when that ends, nothing is
    await finish('turnlog-2pc-monitoring', 'commit')
    const session = await oldest()
    expect(session).toMatchObject({ xid: rows[0]!.xid, state: 'idle in transaction', database: db!.name })
    expect(session!.pid).toEqual(expect.any(Number))
    await later.query('rollback')
    expect(await oldest()).toBeNull()
  })

  it('holds delivery back until COMMIT PREPARED (its own event first, then the later ones) or ROLLBACK PREPARED', async () => {
    // given a consumer that has delivered the log so far (the messages of two sessions), listening
    // for notifications (the prepared transactions turn theirs off: see prepare())
    const session = await store!.createSession()
    const other = await store!.createSession()
    await store!.append(session, [msg('before')])
    // (with no consumer, an append that notifies by default can be prepared: no live lease, no NOTIFY)
    await prepare('turnlog-2pc-no-consumer', { session: other, message: msg('no consumer yet'), notify: true })
    await finish('turnlog-2pc-no-consumer', 'rollback')
    const seen: string[] = []
    const sub = store!.subscribe(
      { name: 'two-phase', from: 'start' },
      (event: SubscribedEvent) => {
        if (event.type === 'message_appended') seen.push(event.payload.content as string)
      },
      { pollIntervalMs: 50, heldBackPollIntervalMs: 20 },
    )
    try {
      await waitFor('the first event', () => seen.length === 1, [sub])

      // when a prepared transaction that appended an event is open, and a later transaction commits one
      // (in the other session: the prepared one holds its session's row)
      await prepare('turnlog-2pc-commit', { session, message: msg('prepared, then committed') })
      await store!.append(other, [msg('after the prepared one')])

      // then the committed later event is held back, not delivered
      await waitFor('the consumer to see the later event held back', () => sub.heldBack, [sub])
      expect(await sub.lag()).toMatchObject({ visible: 0, heldBack: 1 })
      expect(seen).toEqual(['before'])

      // when the prepared transaction commits
      await finish('turnlog-2pc-commit', 'commit')

      // then delivery resumes: its event, then the later one (transaction order, not commit order), each once
      await sub.catchUp()
      expect(seen).toEqual(['before', 'prepared, then committed', 'after the prepared one'])

      // when a transaction appends while the consumer listens (its lease is live), notifying as it does by default
      const refused = await prepare('turnlog-2pc-notified', { session: other, message: msg('notified'), notify: true }).catch(
        (e: unknown) => e,
      )

      // then it cannot be prepared (Postgres refuses a transaction that ran NOTIFY), and it was rolled back
      expect(refused).toMatchObject({
        code: '0A000',
        message: expect.stringMatching(/cannot PREPARE a transaction that has executed .*NOTIFY/),
      })

      // when another prepared transaction is open and a later event commits
      await prepare('turnlog-2pc-rollback', { session: other, message: msg('prepared, then rolled back') })
      await store!.append(session, [msg('after the rolled back one')])
      await waitFor('the consumer to see the later event held back again', () => sub.heldBack, [sub])
      expect(seen).toHaveLength(3)

      // when it is rolled back
      await finish('turnlog-2pc-rollback', 'rollback')

      // then the later event is delivered, and the rolled-back one never is
      await sub.catchUp()
      expect(seen).toEqual(['before', 'prepared, then committed', 'after the prepared one', 'after the rolled back one'])
      expect((await store!.load(other)).messages.map((m) => (m.payload as { content: string }).content)).toEqual(['after the prepared one'])
      expect(await oldest()).toBeNull()
    } finally {
      await sub.stop()
    }
  })
})
