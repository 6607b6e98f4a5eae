/**
 * openStore during a database failover (issue 13 item 13): its migration check met a terminated
 * backend and threw `DB_TRANSIENT`, although a service restarting during a failover calls it first.
 * openStore now retries a transient failure of the check, bounded (5 tries, 1.5 s of pauses); any
 * other failure, or a transient one that lasts, still fails with its code.
 *
 * The backend is terminated while it provably runs the check: an admin session holds the migrator's
 * advisory lock, so openStore's backend waits on it, and the test terminates exactly that backend.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { randomBytes } from 'node:crypto'
import { createServer } from 'node:net'
import pg from 'pg'
import { isTurnlogError } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'

/** The advisory lock kysely's Migrator takes on Postgres. */
const MIGRATION_LOCK_ID = '3853314791062309107'

let db: TestDatabase
let admin: pg.Client
let holder: pg.Client

beforeAll(async () => {
  db = await createTestDatabase()
  admin = new pg.Client({ connectionString: db.connectionString })
  holder = new pg.Client({ connectionString: db.connectionString })
  await admin.connect()
  await holder.connect()
})

afterAll(async () => {
  await holder?.end()
  await admin?.end()
  await db?.drop()
})

/** Terminates the backends of `application` waiting for the migration lock, `times` times; returns how many it terminated. */
async function terminateWaiters(application: string, times: number, deadlineMs: number): Promise<number> {
  let done = 0
  const until = Date.now() + deadlineMs
  while (done < times && Date.now() < until) {
    const { rows } = await admin.query<{ terminated: boolean }>(
      `select pg_terminate_backend(pid) as terminated from pg_stat_activity
        where application_name = $1 and wait_event_type = 'Lock' and wait_event = 'advisory'`,
      [application],
    )
    done += rows.filter((r) => r.terminated).length
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return done
}

const open = (application: string) =>
  openStore({ connectionString: db.connectionString, pool: { max: 2, application_name: application } }).then(
    async (store) => {
      await store.close()
      return 'opened' as const
    },
    (error: unknown) => error,
  )

describe('openStore when the database terminates its backend during the migration check', () => {
  it('incident: one terminated backend during the check: openStore retries and succeeds', async () => {
    // given: the migrator's lock is held, so openStore's check waits on it
    await holder.query(`select pg_advisory_lock(${MIGRATION_LOCK_ID})`)
    const application = `item13-${randomBytes(4).toString('hex')}`
    // when: its backend is terminated while it waits, then the lock is free again
    const opening = open(application)
    const terminated = await terminateWaiters(application, 1, 20_000)
    await holder.query(`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`)
    // then
    expect(terminated).toBe(1)
    expect(await opening).toBe('opened')
  }, 60_000)

  it('class: up to 4 terminations in a row are absorbed; the 5th fails with DB_TRANSIENT after the bound', async () => {
    for (const kills of [2, 4, 5]) {
      // given
      await holder.query(`select pg_advisory_lock(${MIGRATION_LOCK_ID})`)
      const application = `item13-${randomBytes(4).toString('hex')}`
      const started = Date.now()
      // when
      const opening = open(application)
      const terminated = await terminateWaiters(application, kills, 30_000)
      await holder.query(`select pg_advisory_unlock(${MIGRATION_LOCK_ID})`)
      const outcome = await opening
      // then
      expect(terminated).toBe(kills)
      if (kills < 5) expect(outcome).toBe('opened')
      else {
        expect(isTurnlogError(outcome, 'DB_TRANSIENT')).toBe(true)
        expect(Date.now() - started).toBeGreaterThanOrEqual(1_500) // it paused 100+200+400+800 ms first
      }
    }
  }, 120_000)

  it('a persistent failure (nothing listens) fails with DB_TRANSIENT after the bound, not at once and not forever', async () => {
    // given: a port nothing listens on
    const server = createServer()
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    const port = (server.address() as { port: number }).port
    await new Promise((resolve) => server.close(resolve))
    const started = Date.now()
    // when
    const error = await openStore({ connectionString: `postgresql://postgres@127.0.0.1:${port}/x` }).then(
      () => undefined,
      (e: unknown) => e,
    )
    // then
    const elapsed = Date.now() - started
    expect(isTurnlogError(error, 'DB_TRANSIENT')).toBe(true)
    expect((error as { details: { nodeCode?: string } }).details.nodeCode).toBe('ECONNREFUSED')
    expect(elapsed).toBeGreaterThanOrEqual(1_500)
    expect(elapsed).toBeLessThan(10_000)
  }, 60_000)

  it('a failure that is not transient is not retried (a database that does not exist: at once)', async () => {
    // given
    const url = new URL(db.connectionString)
    url.pathname = `/no_such_db_${randomBytes(4).toString('hex')}`
    const started = Date.now()
    // when
    const error = await openStore({ connectionString: url.toString() }).then(
      () => undefined,
      (e: unknown) => e,
    )
    // then
    expect(isTurnlogError(error, 'DB_ERROR')).toBe(true)
    expect(Date.now() - started).toBeLessThan(1_000)
  }, 60_000)
})
