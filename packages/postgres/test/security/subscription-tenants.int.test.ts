/**
 * Subscription checkpoints belong to a tenant (migration 0005; docs/security.md, "Subscription
 * checkpoints"). Before it, `turnlog_writer` could update, delete and lock every row of
 * `turnlog.subscriptions`: a tenant's writer login with raw SQL could move another tenant's checkpoint
 * (its consumer then silently skipped events), delete it, or `LOCK TABLE turnlog.subscriptions` and stall
 * every consumer. Here a tenant writer's raw SQL, and the store API of two tenants using the same
 * names, must find another tenant's checkpoint exactly like a missing one, and a listening lease of any
 * tenant must still wake consumers.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import {
  dropSubscription,
  listSubscriptions,
  rebaseSubscription,
  type PostgresStore,
  type SubscribedEvent,
  type Subscription,
} from '@turnlog/postgres'
import pg from 'pg'
import { runSql, sqlStateOf, type LoginRole } from './support/security-fixtures.js'
import { waitFor } from '../support/subscription-support.js'
import { useTestBed } from '../support/use-test-bed.js'

let dbUrl: string
let admin: PostgresStore
let writerA: LoginRole, writerB: LoginRole, readerA: LoginRole
let storeA: PostgresStore, storeB: PostgresStore
let sessionA: SessionId, sessionB: SessionId, sessionNone: SessionId

useTestBed(async (bed) => {
  dbUrl = bed.db.connectionString
  admin = await bed.admin()
  writerA = await bed.role('swa', { groups: ['turnlog_writer'], tenant: 'tenant-a' })
  writerB = await bed.role('swb', { groups: ['turnlog_writer'], tenant: 'tenant-b' })
  readerA = await bed.role('sra', { groups: ['turnlog_reader'], tenant: 'tenant-a' })
  storeA = await bed.open(writerA.connectionString)
  storeB = await bed.open(writerB.connectionString)
  sessionA = await storeA.createSession({ tenantId: 'tenant-a' })
  sessionB = await storeB.createSession({ tenantId: 'tenant-b' })
  sessionNone = await admin.createSession()
  await storeA.append(sessionA, [createMessage({ role: 'user', content: 'a1' })])
  await storeB.append(sessionB, [createMessage({ role: 'user', content: 'b1' }), createMessage({ role: 'user', content: 'b2' })])
  await admin.append(sessionNone, [createMessage({ role: 'user', content: 'n1' })])
})

/** Runs `work` on a client of `url`, closed after. */
async function withClient<T>(url: string, work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: url })
  client.on('error', () => {})
  await client.connect()
  try {
    return await work(client)
  } finally {
    await client.end().catch(() => {})
  }
}

/** Subscribes, catches up and stops: the name's checkpoint then exists in the store's tenant. */
async function consumeOnce(store: PostgresStore, name: string): Promise<SubscribedEvent[]> {
  const seen: SubscribedEvent[] = []
  const sub = store.subscribe({ name, from: 'start' }, (e) => {
    seen.push(e)
  })
  await sub.catchUp()
  await sub.stop()
  return seen
}

/** Every checkpoint row, as the owner sees it. */
async function allRows(): Promise<string[]> {
  const rows = await runSql<{ line: string }>(
    dbUrl,
    `select coalesce(tenant_id, '-') || ' ' || name || ' ' || tx_id || ' ' || global_position || ' ' || delivered || ' '
            || coalesce(last_error::text, '-') || ' ' || coalesce(listening_until::text, '-') as line
       from turnlog.subscriptions order by name, tenant_id nulls first`,
  )
  return rows.map((r) => r.line)
}

describe("a tenant writer's raw SQL on turnlog.subscriptions", () => {
  it("sees its own tenant's checkpoints only, and may not insert, update, delete, row-lock or lock it in a mode that blocks", async () => {
    // given the same name in tenants A and B and without a tenant, and a name only B has
    await consumeOnce(storeA, 'raw-shared')
    await consumeOnce(storeB, 'raw-shared')
    await consumeOnce(admin, 'raw-shared')
    await consumeOnce(storeB, 'raw-only-b')
    const before = await allRows()

    // when tenant A's writer reads the table, and tries every write and lock on it (its own rows included)
    const seen = await runSql<{ tenant_id: string | null; name: string }>(
      writerA.connectionString,
      'select tenant_id, name from turnlog.subscriptions order by name',
    )
    const writes = await Promise.all(
      [
        `insert into turnlog.subscriptions (name, tenant_id, tx_id, global_position) values ('raw-new', 'tenant-a', '0', 0)`,
        `update turnlog.subscriptions set tx_id = '999999' where name = 'raw-shared'`,
        `delete from turnlog.subscriptions where name = 'raw-shared'`,
        'truncate turnlog.subscriptions',
        `select name from turnlog.subscriptions where name = 'raw-shared' for update`,
        `select name from turnlog.subscriptions where name = 'raw-shared' for no key update`,
        `select name from turnlog.subscriptions where name = 'raw-shared' for share`,
        `select name from turnlog.subscriptions where name = 'raw-shared' for key share`,
      ].map((statement) => sqlStateOf(writerA.connectionString, statement)),
    )
    const modes = [
      'row share',
      'row exclusive',
      'share update exclusive',
      'share',
      'share row exclusive',
      'exclusive',
      'access exclusive',
    ] as const
    const locks = await Promise.all(
      modes.map((mode) =>
        withClient(writerA.connectionString, async (client) => {
          await client.query(`set lock_timeout = '2s'`)
          await client.query('begin')
          return client
            .query(`lock table turnlog.subscriptions in ${mode} mode`)
            .then(() => 'ok')
            .catch((error: unknown) => String((error as { code?: unknown }).code))
        }),
      ),
    )

    // then it sees only tenant A's row, every write and blocking lock is refused, and nothing changed
    expect(seen).toEqual([{ tenant_id: 'tenant-a', name: 'raw-shared' }])
    expect(writes).toEqual(writes.map(() => '42501'))
    expect(locks).toEqual(modes.map(() => '42501'))
    expect(await allRows()).toEqual(before)
  })

  it('may hold ACCESS SHARE (a read), which blocks no consumer: another tenant moves its checkpoint meanwhile', async () => {
    // given tenant A's writer holding the weakest lock in an open transaction
    await withClient(writerA.connectionString, async (client) => {
      await client.query('begin')
      await client.query('lock table turnlog.subscriptions in access share mode')

      // when tenant B's consumer creates and moves its checkpoint
      const seen = await consumeOnce(storeB, 'while-a-reads')

      // then it did, and its checkpoint is past its events
      expect(seen.map((e) => e.sessionId)).toEqual([sessionB, sessionB])
      const [info] = (await listSubscriptions(storeB)).filter((s) => s.name === 'while-a-reads')
      expect(info?.delivered).toBe(2)
      await client.query('rollback')
    })
  })

  it("calls the checkpoint functions on another tenant's checkpoint and gets the answers of a missing one; nothing changes", async () => {
    // given B's checkpoint 'fn-b' (also the name of one of A's) and a name nobody has
    await consumeOnce(storeB, 'fn-b')
    await consumeOnce(storeA, 'fn-b')
    const [b] = await runSql<{ tx_id: string; gp: string }>(
      dbUrl,
      `select tx_id::text as tx_id, global_position::text as gp from turnlog.subscriptions where tenant_id = 'tenant-b' and name = 'fn-b'`,
    )
    const before = await allRows()
    const calls = (tenant: string | null, name: string): readonly (readonly [string, readonly unknown[]])[] => [
      [
        'select turnlog.subscription_move($1, $2, $3::xid8, $4::bigint, $5::xid8, $6::bigint, 0) as r',
        [tenant, name, b!.tx_id, b!.gp, '999999', 1],
      ],
      ['select turnlog.subscription_renew_lease($1, $2, 3600) as r', [tenant, name]],
      [`select turnlog.subscription_record_error($1, $2, '{"forged":true}') as r`, [tenant, name]],
      [`select count(*)::int as r from turnlog.subscription_rebase($1, $2, '999999'::xid8, 1)`, [tenant, name]],
      ['select turnlog.subscription_drop($1, $2) as r', [tenant, name]],
    ]
    const answers = async (tenant: string | null, name: string): Promise<unknown[]> => {
      const out: unknown[] = []
      for (const [text, params] of calls(tenant, name)) {
        const rows = await runSql<{ r: unknown }>(writerA.connectionString, text, params).catch((e: unknown) => [
          { r: (e as { code?: unknown }).code },
        ])
        out.push(rows[0]?.r)
      }
      return out
    }

    // when tenant A's writer calls each function on B's checkpoint, and on a missing one
    const onB = await answers('tenant-b', 'fn-b')
    const onMissing = await answers('tenant-a', 'fn-nobody')
    // and tries to create a checkpoint in tenant B, and one without a tenant
    const create = await Promise.all(
      ['tenant-b', null].map((t) =>
        sqlStateOf(writerA.connectionString, `select turnlog.subscription_create($1, 'fn-planted', '0'::xid8, 0)`, [t]),
      ),
    )

    // then the answers are the same (nothing found), the creations are refused, and no row changed
    expect(onB).toEqual([false, false, false, 0, false])
    expect(onB).toEqual(onMissing)
    expect(create).toEqual(['42501', '42501'])
    expect(await allRows()).toEqual(before)

    // and the same calls on its own checkpoint do act (the probe is not vacuous): the lease is renewed
    const [own] = await runSql<{ r: boolean }>(
      writerA.connectionString,
      `select turnlog.subscription_renew_lease('tenant-a', 'fn-b', 1) as r`,
    )
    expect(own?.r).toBe(true)
  })

  it('after each role switch it can make, the login still acts for its tenant', async () => {
    // given B's checkpoint 'switch-b', and A's of the same name
    await consumeOnce(storeB, 'switch-b')
    await consumeOnce(storeA, 'switch-b')
    const [b] = await runSql<{ tx_id: string; gp: string }>(
      dbUrl,
      `select tx_id::text as tx_id, global_position::text as gp from turnlog.subscriptions where tenant_id = 'tenant-b' and name = 'switch-b'`,
    )
    const before = await allRows()
    const switches = [
      ['set role turnlog_writer'],
      ['set role turnlog_writer', 'reset role'],
      ['begin', 'set local role turnlog_writer'],
      [`select set_config('role', 'turnlog_writer', false)`],
    ]
    // when tenant A's login switches role, then reads the table and calls the functions on B's checkpoint (at its real place)
    const answers = await Promise.all(
      switches.map((setup) =>
        withClient(writerA.connectionString, async (client) => {
          for (const statement of setup) await client.query(statement)
          const { rows } = await client.query<{ tenants: string[] | null; moved: boolean; dropped: boolean }>(
            `select (select array_agg(distinct coalesce(tenant_id, '-')) from turnlog.subscriptions) as tenants,
                    turnlog.subscription_move('tenant-b', 'switch-b', $1::xid8, $2::bigint, '999999'::xid8, 1, 0) as moved,
                    turnlog.subscription_drop('tenant-b', 'switch-b') as dropped`,
            [b?.tx_id, b?.gp],
          )
          return rows[0]
        }),
      ),
    )
    // then it sees tenant A's rows only, finds nothing of B, and nothing changed
    expect(answers).toEqual(switches.map(() => ({ tenants: ['tenant-a'], moved: false, dropped: false })))
    expect(await allRows()).toEqual(before)
  })

  it('a tenant reader reads its tenant checkpoints but may not call the checkpoint functions', async () => {
    // given A's checkpoint
    await consumeOnce(storeA, 'reader-probe')
    // when tenant A's reader calls each function on it
    const states = await Promise.all(
      [
        `select turnlog.subscription_create('tenant-a', 'reader-new', '0'::xid8, 0)`,
        `select turnlog.subscription_move('tenant-a', 'reader-probe', '0'::xid8, 0, '0'::xid8, 0, 0)`,
        `select turnlog.subscription_renew_lease('tenant-a', 'reader-probe', 1)`,
        `select turnlog.subscription_record_error('tenant-a', 'reader-probe', '{}')`,
        `select turnlog.subscription_drop('tenant-a', 'reader-probe')`,
        `select * from turnlog.subscription_rebase('tenant-a', 'reader-probe', '0'::xid8, 0)`,
      ].map((s) => sqlStateOf(readerA.connectionString, s)),
    )
    const seen = await runSql<{ tenant_id: string }>(readerA.connectionString, 'select distinct tenant_id from turnlog.subscriptions')
    // then it lacks EXECUTE, and reads only tenant A's rows
    expect(states).toEqual(states.map(() => '42501'))
    expect(seen).toEqual([{ tenant_id: 'tenant-a' }])
  })
})

describe('two tenants through the store API', () => {
  it("each tenant's consumer of the same name runs at the same time, gets its tenant's events and moves its own checkpoint", async () => {
    // given consumers named 'projector' in tenants A and B and without a tenant, all running together
    const seen = { a: [] as SubscribedEvent[], b: [] as SubscribedEvent[], none: [] as SubscribedEvent[] }
    const subs: [Subscription, Subscription, Subscription] = [
      storeA.subscribe({ name: 'projector', from: 'start' }, (e) => void seen.a.push(e), { waitForLock: false }),
      storeB.subscribe({ name: 'projector', from: 'start' }, (e) => void seen.b.push(e), { waitForLock: false }),
      admin.subscribe({ name: 'projector', from: 'start', filter: { sessionId: sessionNone } }, (e) => void seen.none.push(e), {
        waitForLock: false,
      }),
    ]
    try {
      await Promise.all(subs.map((s) => s.catchUp()))

      // then each delivered its own tenant's events only
      expect(seen.a.map((e) => e.sessionId)).toEqual([sessionA])
      expect(seen.b.map((e) => e.sessionId)).toEqual([sessionB, sessionB])
      expect(seen.none.map((e) => e.sessionId)).toEqual([sessionNone])
      // and all three hold their lock at once (none was refused as taken by another tenant's)
      expect(subs.map((s) => s.state)).toEqual(['running', 'running', 'running'])
      // and each tenant lists its own checkpoint, active; the owner lists all three with their tenants
      const mine = await listSubscriptions(storeA)
      expect(mine.filter((s) => s.name === 'projector').map((s) => [s.tenantId, s.delivered, s.active])).toEqual([['tenant-a', 1, true]])
      expect(mine.every((s) => s.tenantId === 'tenant-a')).toBe(true)
      const all = (await listSubscriptions(admin)).filter((s) => s.name === 'projector')
      expect(all.map((s) => [s.tenantId, s.active])).toEqual([
        [null, true],
        ['tenant-a', true],
        ['tenant-b', true],
      ])
      expect(all.slice(1).map((s) => s.delivered)).toEqual([1, 2])

      // when tenant B appends while all run
      await storeB.append(sessionB, [createMessage({ role: 'user', content: 'b3' })])
      await waitFor('B to deliver b3', () => seen.b.length === 3, 10_000, admin, subs)
      await Promise.all(subs.map((s) => s.catchUp()))
      // then only B's consumer got it
      expect([seen.a.length, seen.b.length, seen.none.length]).toEqual([1, 3, 1])
    } finally {
      await Promise.all(subs.map((s) => s.stop()))
    }
  })

  it("rebase and drop act on the caller's tenant's checkpoint only; another tenant's name answers like a missing one", async () => {
    // given 'admin-shared' in A and B, and 'admin-only-b' in B only
    await consumeOnce(storeA, 'admin-shared')
    await consumeOnce(storeB, 'admin-shared')
    await consumeOnce(storeB, 'admin-only-b')
    const bBefore = (await listSubscriptions(storeB)).map((s) => [s.name, s.checkpoint])

    // when A rebases and drops B's-only name, and a name nobody has
    const rebaseB = await rebaseSubscription(storeA, 'admin-only-b', { toStart: true }).catch((e: unknown) => e)
    const rebaseMissing = await rebaseSubscription(storeA, 'admin-nobody', { toStart: true }).catch((e: unknown) => e)
    const dropB = await dropSubscription(storeA, 'admin-only-b')
    const dropMissing = await dropSubscription(storeA, 'admin-nobody')
    // and rebases, then drops, its own 'admin-shared'
    const rebased = await rebaseSubscription(storeA, 'admin-shared', { toStart: true })
    const dropped = await dropSubscription(storeA, 'admin-shared')

    // then B's names answer exactly like missing ones
    expect(rebaseB).toMatchObject({ code: 'SUBSCRIPTION_NOT_FOUND' })
    expect(rebaseMissing).toMatchObject({ code: 'SUBSCRIPTION_NOT_FOUND' })
    expect((rebaseB as Error).message.replace('admin-only-b', 'X')).toBe((rebaseMissing as Error).message.replace('admin-nobody', 'X'))
    expect([dropB, dropMissing]).toEqual([false, false])
    // and A's own were rebased and dropped, while every checkpoint of B is as it was
    expect(rebased).toMatchObject({ name: 'admin-shared', tenantId: 'tenant-a', to: { txId: '0', globalPosition: 0 } })
    expect(dropped).toBe(true)
    expect((await listSubscriptions(storeA)).map((s) => s.name)).not.toContain('admin-shared')
    expect((await listSubscriptions(storeB)).map((s) => [s.name, s.checkpoint])).toEqual(bBefore)
  })
})

describe('wake-ups across tenants', () => {
  it("a tenant's raw insert notifies while only another tenant's consumer holds a listening lease", async () => {
    // given tenant B's consumer listening, and no other live lease
    await runSql(dbUrl, `update turnlog.subscriptions set listening_until = null where tenant_id is distinct from 'tenant-b'`)
    const sub = storeB.subscribe({ name: 'listener-b', from: 'now' }, () => {})
    try {
      await sub.catchUp()
      await waitFor('B to hold a listening lease', async () => {
        const [row] = await runSql<{ n: number }>(
          dbUrl,
          `select count(*)::int as n from turnlog.subscriptions where name = 'listener-b' and listening_until > now()`,
        )
        return row?.n === 1
      })
      await runSql(dbUrl, `update turnlog.subscriptions set listening_until = null where tenant_id is distinct from 'tenant-b'`)
      // and a listener on the channel
      await withClient(dbUrl, async (listener) => {
        const notified: string[] = []
        listener.on('notification', (n) => notified.push(n.channel))
        await listener.query('listen turnlog_events')

        // when tenant A's writer inserts an event with raw SQL (the trigger runs as A, not as the owner)
        await withClient(writerA.connectionString, async (client) => {
          await client.query('begin')
          const { rows } = await client.query<{ version: string }>(
            'select version from turnlog.sessions where session_id = $1 for update',
            [sessionA],
          )
          const next = Number(rows[0]?.version) + 1
          await client.query(
            `insert into turnlog.events (session_id, seq, event_id, type, data) values ($1, $2, gen_random_uuid(), 'messages_retracted', '{"ids":[]}')`,
            [sessionA, next],
          )
          await client.query('update turnlog.sessions set version = $2 where session_id = $1', [sessionA, next])
          await client.query('commit')
        })

        // then the notification was sent: the trigger saw B's lease
        await waitFor('a notification', () => notified.length > 0, 5_000)
        expect(notified[0]).toBe('turnlog_events')
      })
    } finally {
      await sub.stop()
    }
  })
})
