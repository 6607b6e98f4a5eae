/**
 * A fork with a given child id is idempotent, under concurrency too. Incident (issue 13, item 7):
 * concurrent `fork` calls with the same child id gave the losers `DB_ERROR` (a unique violation), and
 * `fork({ id })` with another tenant's session id gave `DB_ERROR`. Expected: the id (a replay: same
 * parent, same point) or `SESSION_EXISTS`, and exactly one child. 8 stores, each with its own pool.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, newSessionId, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { sql } from 'kysely'
import { useTestBed, type TestBed } from './support/use-test-bed.js'

const WRITERS = 8
const ROUNDS = 5

let bed: TestBed
let stores: PostgresStore[] = []

// each writer has its own store and pool, as separate processes would
useTestBed(async (opened) => {
  bed = opened
  stores = []
  for (let i = 0; i < WRITERS; i++) stores.push(await bed.open(bed.db.connectionString))
})

function at<T>(list: readonly T[], i: number): T {
  const v = list[i]
  if (v === undefined) throw new Error(`no element ${i}`)
  return v
}

type Outcome = { ok: true; id: string } | { ok: false; code: string }

async function outcome(run: () => Promise<string>): Promise<Outcome> {
  try {
    return { ok: true, id: await run() }
  } catch (error) {
    if (!isTurnlogError(error)) throw error
    return { ok: false, code: error.code }
  }
}

/** A session with `n` messages. */
async function parentWith(n: number): Promise<{ id: SessionId; messages: Message[] }> {
  const id = await at(stores, 0).createSession()
  const messages = Array.from({ length: n }, (_, i) => createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}` }))
  await at(stores, 0).append(id, messages)
  return { id, messages }
}

/** The child's session rows and events, by SQL: one row, a fork marker and `inherited` copies, no more. */
async function expectOneChild(child: string, parent: string, inherited: number): Promise<void> {
  const { rows } = await sql<{ sessions: string; events: string; forks: string; parent: string | null }>`
    select (select count(*) from turnlog.sessions where session_id = ${child}) as sessions,
           (select count(*) from turnlog.events where session_id = ${child}) as events,
           (select count(*) from turnlog.events where session_id = ${child} and type = 'session_forked') as forks,
           (select parent_session_id::text from turnlog.sessions where session_id = ${child}) as parent`.execute(at(stores, 0).db)
  expect(rows[0]).toEqual({ sessions: '1', events: String(1 + inherited), forks: '1', parent })
}

describe('fork with one child id from many connections (Postgres)', () => {
  it('the same fork (same parent, same point) sent by 8 writers at once: every writer gets the id, one child exists', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // given
      const parent = await parentWith(4)
      const child = newSessionId()
      const point = at(parent.messages, 2)

      // when
      const outcomes = await Promise.all(stores.map((s) => outcome(() => s.fork(parent.id, { at: point.id, id: child }))))

      // then
      expect(outcomes).toEqual(stores.map(() => ({ ok: true, id: child })))
      await expectOneChild(child, parent.id, 3)
      expect((await at(stores, 0).load(child)).messages.map((m) => m.id)).toEqual(parent.messages.slice(0, 3).map((m) => m.id))
    }
  })

  it('different forks (another point, another parent) racing for one child id: the forks like the winner get the id, the rest SESSION_EXISTS', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // given: two parents; writer w forks parent w % 2 at point w % 4
      const parents = [await parentWith(4), await parentWith(4)]
      const child = newSessionId()
      const plan = stores.map((_, w) => ({ parent: at(parents, w % 2), point: w % 4 }))

      // when
      const outcomes = await Promise.all(
        plan.map((p, w) => outcome(() => at(stores, w).fork(p.parent.id, { at: at(p.parent.messages, p.point).id, id: child }))),
      )

      // then: one child, from one of the plans; exactly the writers with that plan got the id
      const info = await at(stores, 0).getSession(child)
      const won = plan.findIndex((p) => p.parent.id === info.parent?.sessionId && at(p.parent.messages, p.point).id === info.parent.at)
      expect(won).toBeGreaterThanOrEqual(0)
      const winner = at(plan, won)
      outcomes.forEach((o, w) => {
        const same = at(plan, w).parent === winner.parent && at(plan, w).point === winner.point
        expect(o).toEqual(same ? { ok: true, id: child } : { ok: false, code: 'SESSION_EXISTS' })
      })
      await expectOneChild(child, winner.parent.id, winner.point + 1)
    }
  })

  it('fork racing createSession for one id: each gets the id or SESSION_EXISTS, one session exists', async () => {
    for (let round = 0; round < ROUNDS; round++) {
      // given
      const parent = await parentWith(2)
      const id = newSessionId()

      // when: half fork, half create a plain session with that id
      const outcomes = await Promise.all(
        stores.map((s, w) =>
          outcome(() => (w % 2 === 0 ? s.fork(parent.id, { at: at(parent.messages, 1).id, id }) : s.createSession({ id }))),
        ),
      )

      // then
      for (const o of outcomes) expect(o.ok ? o.id : o.code).toMatch(new RegExp(`^(${id}|SESSION_EXISTS)$`))
      const { rows } = await sql<{ n: string }>`select count(*) as n from turnlog.sessions where session_id = ${id}`.execute(
        at(stores, 0).db,
      )
      expect(rows[0]?.n).toBe('1')
    }
  })

  it("fork({ id }) with an id another tenant's session holds: SESSION_EXISTS, nothing written", async () => {
    // given: tenant A's login, and a session of tenant B
    const a = await bed.role('fork_a', { groups: ['turnlog_writer'], tenant: 'fork-a' })
    const tenantA = await openStore({ connectionString: a.connectionString, pool: { max: 1 }, migrate: false })
    try {
      const taken = await at(stores, 0).createSession({ tenantId: 'fork-b' })
      const parent = await tenantA.createSession({ tenantId: 'fork-a' })
      const m = createMessage({ role: 'user', content: 'hello' })
      await tenantA.append(parent, [m])

      // when
      const error = await tenantA.fork(parent, { at: m.id, id: taken }).catch((e: unknown) => e)

      // then
      expect(isTurnlogError(error, 'SESSION_EXISTS')).toBe(true)
      const info = await at(stores, 0).getSession(taken)
      expect({ tenant: info.tenantId, version: info.version, parent: info.parent }).toEqual({ tenant: 'fork-b', version: 0, parent: null })
      expect((await at(stores, 0).getSession(parent)).version).toBe(1)
    } finally {
      await tenantA.close()
    }
  })
})
