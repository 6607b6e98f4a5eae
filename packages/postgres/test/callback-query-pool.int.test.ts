/**
 * `callbackQueryPool`: the pool Kysely is given over a store's own `pg` pool answers Kysely's queries
 * through `pg`'s callback form (docs/performance.md, "load"). Results, parameters, errors (with their
 * SQLSTATE), transactions and the release of a client behave as through `pg` itself.
 */
import { describe, expect, it } from '@jest/globals'
import { useTestBed } from './support/use-test-bed.js'
import { Kysely, PostgresDialect, sql } from 'kysely'
import pg from 'pg'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { callbackQueryPool } from '../src/callback-query-pool.js'

let connectionString = ''
useTestBed(async (bed) => {
  connectionString = bed.db.connectionString
})

async function withKysely(fn: (k: Kysely<unknown>, pool: pg.Pool) => Promise<void>): Promise<void> {
  const pool = new pg.Pool({ connectionString, max: 1 })
  const k = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: callbackQueryPool(pool) }) })
  try {
    await fn(k, pool)
  } finally {
    await k.destroy()
  }
}

describe('callbackQueryPool', () => {
  it('gives rows, parameters, errors with their SQLSTATE and transactions as pg does', async () => {
    await withKysely(async (k) => {
      // rows and parameters
      const { rows } = await sql<{ n: number; t: string }>`select ${41}::int + 1 as n, ${'x y'}::text as t`.execute(k)
      expect(rows).toEqual([{ n: 42, t: 'x y' }])
      // an error keeps its SQLSTATE (the store maps errors by it)
      await expect(sql`select 1 / 0`.execute(k)).rejects.toMatchObject({ code: '22012' })
      // a transaction rolled back leaves nothing; one committed keeps its row
      await sql`create table t (n int)`.execute(k)
      await expect(
        k.transaction().execute(async (tx) => {
          await sql`insert into t values (1)`.execute(tx)
          throw new Error('roll back')
        }),
      ).rejects.toThrow('roll back')
      await k.transaction().execute(async (tx) => {
        await sql`insert into t values (2)`.execute(tx)
      })
      expect((await sql<{ n: number }>`select n from t`.execute(k)).rows).toEqual([{ n: 2 }])
    })
  })

  it('hands Kysely one wrapper per pg client and releases it back to the pool', async () => {
    await withKysely(async (k, pool) => {
      const pids = new Set<number>()
      for (let i = 0; i < 5; i++) pids.add((await sql<{ p: number }>`select pg_backend_pid() as p`.execute(k)).rows[0]!.p)
      // one connection (max 1), reused: released after every query
      expect(pids.size).toBe(1)
      expect(pool.idleCount).toBe(1)
      expect(pool.totalCount).toBe(1)
      // the same pg client comes back as the same wrapper (Kysely keeps its connection per client object)
      const wrapped = callbackQueryPool(pool)
      const first = await wrapped.connect()
      first.release()
      const second = await wrapped.connect()
      second.release()
      expect(second).toBe(first)
    })
  })

  it("serves a caller's own pg pool (openStore({ pool })) through the callback form, and never ends it", async () => {
    const pool = new pg.Pool({ connectionString, max: 2 })
    // a spy on the real clients: how each text query of the store reached pg (with a callback or not)
    const forms: string[] = []
    const spied = new WeakSet<object>()
    const connect = pool.connect.bind(pool) as (...args: unknown[]) => Promise<pg.PoolClient>
    ;(pool as unknown as { connect: (...args: unknown[]) => unknown }).connect = (...args: unknown[]) => {
      // pg's own pool.query() asks with a callback: passed through, not spied
      if (args.length > 0) return connect(...args)
      return spy(connect())
    }
    const spy = async (connecting: Promise<pg.PoolClient>): Promise<pg.PoolClient> => {
      const client = await connecting
      if (!spied.has(client)) {
        spied.add(client)
        const query = client.query.bind(client) as (...args: unknown[]) => unknown
        ;(client as unknown as { query: (...args: unknown[]) => unknown }).query = (...args: unknown[]) => {
          if (typeof args[0] === 'string') forms.push(typeof args.at(-1) === 'function' ? 'callback' : 'promise')
          return query(...args)
        }
      }
      return client
    }
    try {
      const store = await openStore({ pool })
      const session = await store.createSession()
      const messages = [createMessage({ role: 'user', content: 'hi' }), createMessage({ role: 'assistant', content: 'hello' })]
      await store.append(session, messages)
      expect((await store.load(session)).messages.map((m) => m.id)).toEqual(messages.map((m) => m.id))
      await store.close()
      expect(forms.length).toBeGreaterThan(3)
      expect(forms.filter((f) => f !== 'callback')).toEqual([])
      // the caller's pool is still open after the store's close
      expect((await pool.query<{ n: number }>('select 1 as n')).rows).toEqual([{ n: 1 }])
    } finally {
      await pool.end()
    }
  })
})
