/**
 * A caller's typed Kysely (issue 15): `openStore({ kysely })` takes a `Kysely<AppDB>` with the app's
 * own tables, and `withTransaction(trx)` a `Transaction<AppDB>`, without a cast (checked by
 * `pnpm typecheck`). At run time the app's row and the turnlog messages commit, or roll back, together.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { Kysely, PostgresDialect, sql, type Generated, type Transaction } from 'kysely'
import pg from 'pg'

/** The app's own database: one table of its own, none of turnlog's. */
interface AppDB {
  readonly tickets: { readonly id: Generated<number>; readonly title: string; readonly session_id: string }
}

let database: TestDatabase
let db: Kysely<AppDB>
let store: PostgresStore

beforeAll(async () => {
  database = await createTestDatabase()
  db = new Kysely<AppDB>({ dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: database.connectionString, max: 2 }) }) })
  await sql`create table tickets (id serial primary key, title text not null, session_id text not null)`.execute(db)
  store = await openStore({ kysely: db })
})

afterAll(async () => {
  await store.close()
  await db.destroy()
  await database.drop()
})

/** What must and must not compile; never called. */
function compileTimeChecks(trx: Transaction<AppDB>, other: Kysely<{ readonly t: { readonly x: number } }>): void {
  void store.withTransaction(trx)
  void openStore({ kysely: other, migrate: false })
  // @ts-expect-error a Kysely instance is not a transaction
  void store.withTransaction(db)
}

describe('a typed Kysely<AppDB>', () => {
  it('an app row and the messages written through withTransaction(trx) commit together', async () => {
    // given
    const sid = await store.createSession()
    const live: Message[] = [createMessage({ role: 'user', content: 'my printer is on fire' })]

    // when
    await db.transaction().execute(async (trx) => {
      await trx.insertInto('tickets').values({ title: 'printer', session_id: sid }).execute()
      await store.withTransaction(trx).flush(sid, live)
    })

    // then
    const tickets = await db.selectFrom('tickets').select(['title', 'session_id']).execute()
    expect(tickets).toEqual([{ title: 'printer', session_id: sid }])
    expect((await store.load(sid)).messages.map((m) => m.id)).toEqual(live.map((m) => m.id))
    expect(typeof compileTimeChecks).toBe('function')
  })

  it('a throw inside the transaction rolls back the app row and the messages', async () => {
    // given
    const sid = await store.createSession()
    const live: Message[] = [createMessage({ role: 'user', content: 'undo me' })]

    // when
    const outcome = db.transaction().execute(async (trx) => {
      await trx.insertInto('tickets').values({ title: 'rolled back', session_id: sid }).execute()
      await store.withTransaction(trx).flush(sid, live)
      throw new Error('abort')
    })

    // then
    await expect(outcome).rejects.toThrow('abort')
    expect(await db.selectFrom('tickets').select('title').where('session_id', '=', sid).execute()).toEqual([])
    expect((await store.load(sid)).messages).toEqual([])
  })
})
