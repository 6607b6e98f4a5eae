/**
 * A message id belongs to one session (of a tenant), whatever path introduces it and however writers
 * race: append, group commit, a compaction's summary. Incident (issue 13, item 3): concurrent
 * `compact()` calls in several sessions with the same summary message all succeeded, and a compaction
 * racing an `append` of that id elsewhere let both win. Since 0008 one primary key
 * (`turnlog.message_ids`) arbitrates every path; these tests race the paths pairwise over many
 * connections (one store, with its own pool, per writer) and count the holders in SQL.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type MessageId, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { writeOutcome, type WriteOutcome } from '@turnlog/testing'
import { sql } from 'kysely'
import { gate } from './support/gate.js'
import { useTestBed } from './support/use-test-bed.js'

const WRITERS = 8
const ROUNDS = 6

let stores: PostgresStore[] = []
let grouped: PostgresStore[] = []

useTestBed(async (bed) => {
  stores = []
  grouped = []
  // "processes": each writer has its own store and pool; appends go alone (append_messages) ...
  for (let i = 0; i < WRITERS; i++) stores.push(await bed.open(bed.db.connectionString, { groupCommit: false }))
  // ... or through the group commit (append_batches, one statement for several sessions)
  for (let i = 0; i < WRITERS; i++) grouped.push(await bed.open(bed.db.connectionString, { pool: { max: 3 } }))
})

function at<T>(list: readonly T[], i: number): T {
  const v = list[i]
  if (v === undefined) throw new Error(`no element ${i}`)
  return v
}

/** Sessions holding a content event of `id` (any type), by SQL. */
async function holders(id: MessageId): Promise<string[]> {
  const { rows } = await sql<{ session_id: string }>`
    select distinct session_id::text from turnlog.events where message_id = ${id} and content_hash is not null order by 1`.execute(
    at(stores, 0).db,
  )
  return rows.map((r) => r.session_id)
}

type Outcome = WriteOutcome<SessionId>
const outcome = writeOutcome<SessionId>

/** `WRITERS` sessions, each with one live message (something a compaction can cover). */
async function sessionsWithOneMessage(): Promise<{ id: SessionId; first: Message }[]> {
  return Promise.all(
    Array.from({ length: WRITERS }, async (_, w) => {
      const id = await at(stores, w).createSession()
      const first = createMessage({ role: 'user', content: `first of writer ${w}` })
      await at(stores, w).append(id, [first])
      return { id, first }
    }),
  )
}

/** Exactly one session won `x`; every other writer got MESSAGE_CONFLICT foreign_session; the log agrees. */
async function expectOneHolder(x: MessageId, outcomes: readonly Outcome[]): Promise<void> {
  const winners = outcomes.filter((o) => o.ok)
  expect(winners).toHaveLength(1)
  for (const o of outcomes)
    if (!o.ok) expect({ code: o.code, reason: o.reason }).toEqual({ code: 'MESSAGE_CONFLICT', reason: 'foreign_session' })
  expect(await holders(x)).toEqual([at(winners, 0).who])
  // and the arbiter's row names the same session
  const { rows } = await sql<{ session_id: string }>`select session_id::text from turnlog.message_ids where message_id = ${x}`.execute(
    at(stores, 0).db,
  )
  expect(rows.map((r) => r.session_id)).toEqual([at(winners, 0).who])
}

type Path = 'append' | 'group' | 'compact'

/** Introduces `x` into session `s.id` through `path`, by writer `w`. */
function introduce(path: Path, w: number, s: { id: SessionId; first: Message }, x: Message): Promise<unknown> {
  switch (path) {
    case 'append':
      return at(stores, w).append(s.id, [x])
    case 'group':
      return at(grouped, w).append(s.id, [x])
    case 'compact':
      return at(stores, w).compact(s.id, { covered: [s.first.id], summary: x })
  }
}

describe('one message id, one session: every introducing path races every other (Postgres, many connections)', () => {
  const pairs: [Path, Path][] = [
    ['compact', 'compact'],
    ['append', 'compact'],
    ['group', 'compact'],
    ['append', 'append'],
    ['group', 'group'],
    ['append', 'group'],
  ]
  it.each(pairs)(
    '%s vs %s with the same new id in several sessions: exactly one session holds it, the others get MESSAGE_CONFLICT foreign_session',
    async (a, b) => {
      for (let round = 0; round < ROUNDS; round++) {
        // given: one new message and a session per writer
        const sessions = await sessionsWithOneMessage()
        const x = createMessage({ role: 'assistant', content: `contended in round ${round}` })

        // when: every writer introduces it at once, half through each path; group-commit writers also
        // send unrelated appends at the same moment so that several batches share a statement
        const outcomes = await Promise.all(
          sessions.map(async (s, w) => {
            const path = w % 2 === 0 ? a : b
            const filler =
              path === 'group'
                ? Promise.all(
                    [1, 2].map(async () => {
                      const other = await at(grouped, w).createSession()
                      await at(grouped, w).append(other, [createMessage({ role: 'user', content: 'filler' })])
                    }),
                  )
                : Promise.resolve()
            const [o] = await Promise.all([outcome(s.id, () => introduce(path, w, s, x)), filler])
            return o
          }),
        )

        // then
        await expectOneHolder(x.id, outcomes)
      }
    },
  )

  it('a replayed compaction racing itself in one session is one compaction; the other sessions lose', async () => {
    // given: a compaction every writer sends twice (a retry after an ambiguous commit), half of them to one session
    const sessions = await sessionsWithOneMessage()
    const target = at(sessions, 0)
    const x = createMessage({ role: 'assistant', content: 'summary' })

    // when
    const outcomes = await Promise.all(
      sessions.map((s, w) =>
        w % 2 === 0
          ? outcome(target.id, () => at(stores, w).compact(target.id, { covered: [target.first.id], summary: x }))
          : outcome(s.id, () => at(stores, w).compact(s.id, { covered: [s.first.id], summary: x })),
      ),
    )

    // then: every call on the target succeeded (one wrote, the rest are replays) or lost to another
    // session's compaction; one session holds x, once
    const holder = await holders(x.id)
    expect(holder).toHaveLength(1)
    for (const o of outcomes) {
      if (o.who === holder[0]) expect(o.ok).toBe(true)
      else expect(o).toMatchObject({ ok: false, code: 'MESSAGE_CONFLICT', reason: 'foreign_session' })
    }
    const { rows } = await sql<{ n: string }>`select count(*) as n from turnlog.events where message_id = ${x.id}`.execute(at(stores, 0).db)
    expect(Number(at(rows, 0).n)).toBe(1)
  })

  it('a fork racing appends of an id its parent holds: the fork inherits it, no other session gets it', async () => {
    // given: a parent that holds x
    const parent = await at(stores, 0).createSession()
    const x = createMessage({ role: 'user', content: 'held by the parent' })
    await at(stores, 0).append(parent, [x])
    const others = await Promise.all(Array.from({ length: WRITERS / 2 }, (_, w) => at(stores, w).createSession()))

    // when: forks of the parent at x race appends of x to unrelated sessions
    const results = await Promise.all([
      ...Array.from({ length: WRITERS / 2 }, (_, w) => outcome(parent, () => at(stores, WRITERS / 2 + w).fork(parent, { at: x.id }))),
      ...others.map((o, w) => outcome(o, () => at(stores, w).append(o, [x]))),
    ])

    // then: every fork succeeded, every other append was refused; x lives in the parent and its children only
    expect(results.slice(0, WRITERS / 2).every((r) => r.ok)).toBe(true)
    for (const r of results.slice(WRITERS / 2)) expect(r).toMatchObject({ ok: false, code: 'MESSAGE_CONFLICT', reason: 'foreign_session' })
    const { rows } = await sql<{ session_id: string }>`
      select distinct e.session_id::text from turnlog.events e join turnlog.sessions s on s.session_id = e.session_id
       where e.message_id = ${x.id} and (s.session_id = ${parent} or s.parent_session_id = ${parent})`.execute(at(stores, 0).db)
    expect(rows).toHaveLength(1 + WRITERS / 2)
    expect(await holders(x.id)).toHaveLength(1 + WRITERS / 2)
  })

  it('a claim waits for the claiming transaction: its commit makes the waiter a conflict, its rollback lets the waiter win', async () => {
    for (const end of ['commit', 'rollback'] as const) {
      // given: writer 0 appended x to session a in an open transaction
      const a = await at(stores, 0).createSession()
      const b = await at(stores, 1).createSession()
      const x = createMessage({ role: 'user', content: `pending ${end}` })
      const released = gate()
      const claimed = gate()
      const first = at(stores, 0)
        .db.transaction()
        .execute(async (trx) => {
          await at(stores, 0).withTransaction(trx).append(a, [x])
          claimed.open()
          await released.wait
          if (end === 'rollback') throw new Error('rolled back on purpose')
        })
        .then(
          () => 'committed',
          () => 'rolled back',
        )
      await claimed.wait

      // when: writer 1 appends x to session b, then the first transaction ends
      const second = outcome(b, () => at(stores, 1).append(b, [x]))
      await new Promise((resolve) => setTimeout(resolve, 200))
      released.open()

      // then: exactly one holds it, decided by how the first ended
      expect(await first).toBe(end === 'commit' ? 'committed' : 'rolled back')
      const o = await second
      if (end === 'commit') expect(o).toMatchObject({ ok: false, code: 'MESSAGE_CONFLICT', reason: 'foreign_session' })
      else expect(o.ok).toBe(true)
      expect(await holders(x.id)).toEqual([end === 'commit' ? a : b])
    }
  })

  it("inside a caller's transaction the loser of a race gets DB_TRANSIENT (its transaction is aborted), and nothing of it is written", async () => {
    // given: writer 1 claimed x in an open transaction; writer 0's transaction appends x to another session
    const a = await at(stores, 0).createSession()
    const b = await at(stores, 1).createSession()
    const x = createMessage({ role: 'user', content: 'claimed in a transaction' })
    const released = gate()
    const claimed = gate()
    const winner = at(stores, 1)
      .db.transaction()
      .execute(async (trx) => {
        await at(stores, 1).withTransaction(trx).append(b, [x])
        claimed.open()
        await released.wait
      })
    await claimed.wait

    // when
    const loser = at(stores, 0)
      .db.transaction()
      .execute(async (trx) => {
        await at(stores, 0).withTransaction(trx).append(a, [x])
      })
      .catch((e: unknown) => e)
    await new Promise((resolve) => setTimeout(resolve, 200))
    released.open()
    await winner

    // then
    const error = await loser
    expect(isTurnlogError(error, 'DB_TRANSIENT') && error.details['constraint']).toBe('message_ids_pkey')
    expect(await holders(x.id)).toEqual([b])
    expect((await at(stores, 0).getSession(a)).version).toBe(0)
  })
})
