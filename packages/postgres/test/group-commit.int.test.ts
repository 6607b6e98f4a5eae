/**
 * Group commit (`turnlog.append_batches`): appends to different sessions made while others are in
 * flight share one statement and one commit, and each batch keeps every guarantee of a lone append:
 * all-or-nothing, isolated from the other batches' errors (conflict, version, missing session, an id
 * claimed by two sessions), typed errors with conflict evidence, per-session order, idempotent retries.
 * Appends started in the same tick go out as one group (the queue is sent on the next microtask);
 * that they did is checked on the server: the events share one transaction id.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import pg from 'pg'

let db: TestDatabase
let store: PostgresStore
let plain: PostgresStore
let admin: pg.Client

beforeAll(async () => {
  db = await createTestDatabase()
  // directConnection: the group statement runs as a named prepared statement (the plain store runs unnamed ones)
  store = await openStore({
    connectionString: db.connectionString,
    directConnection: true,
    groupCommit: { maxBatches: 16, maxInFlight: 1 },
  })
  plain = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: false })
  admin = new pg.Client({ connectionString: db.connectionString })
  await admin.connect()
})

afterAll(async () => {
  await admin?.end()
  await store?.close()
  await plain?.close()
  await db?.drop()
})

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })

/** The distinct transactions that wrote these sessions' events at or after `fromSeq`. */
async function transactions(sessions: readonly SessionId[], fromSeq = 1): Promise<number> {
  const { rows } = await admin.query<{ n: string }>(
    'select count(distinct tx_id) as n from turnlog.events where session_id = any($1::uuid[]) and seq >= $2',
    [sessions, fromSeq],
  )
  return Number(rows[0]?.n)
}

async function settle<T>(promises: readonly Promise<T>[]): Promise<({ ok: true; value: T } | { ok: false; error: unknown })[]> {
  return Promise.all(
    promises.map((p) =>
      p.then(
        (value) => ({ ok: true as const, value }),
        (error: unknown) => ({ ok: false as const, error }),
      ),
    ),
  )
}

function codeOf(outcome: { ok: boolean; error?: unknown }): string | null {
  if (outcome.ok) return null
  return isTurnlogError(outcome.error) ? outcome.error.code : `not a TurnlogError: ${String(outcome.error)}`
}

describe('group commit', () => {
  it('writes the batches of appends made in the same tick in one transaction, each with its own result', async () => {
    // given eight sessions
    const sessions = await Promise.all(Array.from({ length: 8 }, () => store.createSession()))
    const batches = sessions.map((_, i) =>
      Array.from({ length: 1 + (i % 3) }, (_, k) => (k % 2 === 0 ? user(`s${i} m${k}`) : assistant(`s${i} m${k}`))),
    )
    // when every session appends at once
    const results = await Promise.all(sessions.map((s, i) => store.append(s, batches[i] ?? [])))
    // then one transaction wrote them all, and each caller got its own batch's result
    expect(await transactions(sessions)).toBe(1)
    results.forEach((r, i) => {
      expect(r).toEqual({ version: batches[i]?.length, appended: batches[i]?.map((m) => m.id), duplicates: [] })
    })
    for (const [i, s] of sessions.entries()) {
      expect((await plain.load(s)).messages.map((m) => m.id)).toEqual(batches[i]?.map((m) => m.id))
      expect((await plain.rebuild({ sessionId: s, verify: true })).drift).toEqual([])
    }
  })

  it('a retry of the same group writes nothing and reports every message as a duplicate', async () => {
    // given a group already written
    const sessions = await Promise.all(Array.from({ length: 4 }, () => store.createSession()))
    const batches = sessions.map((_, i) => [user(`q${i}`), assistant(`a${i}`)])
    await Promise.all(sessions.map((s, i) => store.append(s, batches[i] ?? [])))
    const { rows: before } = await admin.query<{ n: string }>('select count(*) as n from turnlog.events')
    // when the same appends are made again, at once
    const again = await Promise.all(sessions.map((s, i) => store.append(s, batches[i] ?? [])))
    // then
    again.forEach((r, i) => expect(r).toEqual({ version: 2, appended: [], duplicates: batches[i]?.map((m) => m.id) }))
    const { rows: after } = await admin.query<{ n: string }>('select count(*) as n from turnlog.events')
    expect(after[0]?.n).toBe(before[0]?.n)
  })

  it('isolates each batch: a conflict, a stale expected version and a missing session fail alone, the rest commit together', async () => {
    // given sessions in various states
    const [ok1, ok2, conflicted, stale] = await Promise.all([0, 1, 2, 3].map(() => store.createSession()))
    const missing = '01900000-0000-7000-8000-00000000dead' as SessionId
    const original = user('the original')
    await plain.append(conflicted as SessionId, [original])
    await plain.append(stale as SessionId, [user('v1')])
    const good1 = [user('g1'), assistant('g1')]
    const good2 = [user('g2')]
    const forged = { ...original, payload: { role: 'user' as const, content: 'the same id, other content' } }
    // when all append in the same tick
    const outcomes = await settle([
      store.append(ok1 as SessionId, good1),
      store.append(conflicted as SessionId, [user('new in a conflicted batch'), forged as Message]),
      store.append(stale as SessionId, [user('stale')], { expectedVersion: 0 }),
      store.append(missing, [user('nobody home')]),
      store.append(ok2 as SessionId, good2),
    ])
    // then each failed batch has its own typed error and wrote nothing; the good ones are in
    expect(outcomes.map(codeOf)).toEqual([null, 'MESSAGE_CONFLICT', 'VERSION_CONFLICT', 'SESSION_NOT_FOUND', null])
    expect((await plain.load(conflicted as SessionId)).messages.map((m) => m.id)).toEqual([original.id])
    expect((await plain.load(stale as SessionId)).version).toBe(1)
    expect((await plain.load(ok1 as SessionId)).messages.map((m) => m.id)).toEqual(good1.map((m) => m.id))
    expect((await plain.load(ok2 as SessionId)).messages.map((m) => m.id)).toEqual(good2.map((m) => m.id))
    expect(await transactions([ok1 as SessionId, ok2 as SessionId])).toBe(1)
    // and the conflict left its evidence, as a lone append does
    const { rows } = await admin.query<{ reason: string }>('select reason from turnlog.conflicts where session_id = $1', [conflicted])
    expect(rows.map((r) => r.reason)).toEqual(['content_mismatch'])
  })

  it('gives a new message id appended to two sessions in one group to the first; the second gets a foreign-session conflict', async () => {
    // given two sessions and one message
    const [a, b] = await Promise.all([store.createSession(), store.createSession()])
    const shared = user('claimed twice')
    // when both append it in the same tick
    const outcomes = await settle([store.append(a, [shared]), store.append(b, [user('b own'), shared])])
    // then
    expect(outcomes.map(codeOf)).toEqual([null, 'MESSAGE_CONFLICT'])
    const conflict = (outcomes[1] as { error: { details: Record<string, unknown> } }).error
    expect(conflict.details).toMatchObject({ messageId: shared.id, reason: 'foreign_session', otherSessionId: a })
    expect((await plain.load(b)).messages).toEqual([])
    expect((await plain.load(a)).messages.map((m) => m.id)).toEqual([shared.id])
  })

  it("keeps one session's appends in call order, one at a time, while other sessions share groups", async () => {
    // given
    const sessions = await Promise.all(Array.from({ length: 3 }, () => store.createSession()))
    const turns = sessions.map((_, i) => Array.from({ length: 5 }, (_, t) => [user(`s${i} t${t}`), assistant(`s${i} t${t}`)]))
    // when every turn of every session is started at once, none awaited
    const results = await Promise.all(sessions.flatMap((s, i) => (turns[i] ?? []).map((turn) => store.append(s, turn))))
    // then each session's turns are in call order and versions count up by two
    expect(results.map((r) => r.version)).toEqual(sessions.flatMap(() => [2, 4, 6, 8, 10]))
    for (const [i, s] of sessions.entries()) {
      expect((await plain.load(s)).messages.map((m) => m.id)).toEqual((turns[i] ?? []).flat().map((m) => m.id))
    }
    // five rounds of one group each (a session has at most one batch in flight)
    expect(await transactions(sessions)).toBe(5)
  })

  it('mixes duplicates and new messages of one batch, and batches that are only duplicates', async () => {
    // given
    const [a, b] = await Promise.all([store.createSession(), store.createSession()])
    const first = [user('a1'), assistant('a2')]
    await plain.append(a, first)
    const bOnly = [user('b1')]
    await plain.append(b, bOnly)
    const next = assistant('a3')
    // when a re-sends its history plus one new message, and b only re-sends
    const [ra, rb] = await Promise.all([store.append(a, [...first, next]), store.append(b, bOnly)])
    // then
    expect(ra).toEqual({ version: 3, appended: [next.id], duplicates: first.map((m) => m.id) })
    expect(rb).toEqual({ version: 1, appended: [], duplicates: [bOnly[0]?.id] })
  })

  it('flush uses the group commit too', async () => {
    // given
    const sessions = await Promise.all(Array.from({ length: 4 }, () => store.createSession()))
    const lives = sessions.map((_, i) => [user(`f${i}`), assistant(`f${i}`)])
    // when every session flushes at once
    const results = await Promise.all(sessions.map((s, i) => store.flush(s, lives[i] ?? [])))
    // then
    results.forEach((r, i) => expect(r.appended).toEqual(lives[i]?.map((m) => m.id)))
    expect(await transactions(sessions)).toBe(1)
  })

  it('close waits for the appends it has accepted', async () => {
    // given a store of its own
    const own = await openStore({ connectionString: db.connectionString, migrate: false, groupCommit: { maxInFlight: 1 } })
    const sessions = await Promise.all(Array.from({ length: 6 }, () => own.createSession()))
    const batches = sessions.map((_, i) => [user(`c${i}`)])
    // when it is closed right after the appends are made (two per session: the second waits in the queue)
    const appends = sessions.flatMap((s, i) => [own.append(s, batches[i] ?? []), own.append(s, [assistant(`c${i} again`)])])
    await own.close()
    // then every accepted append committed
    const results = await Promise.all(appends)
    expect(results.map((r) => r.version)).toEqual(sessions.flatMap(() => [1, 2]))
    for (const s of sessions) expect((await plain.load(s)).version).toBe(2)
    await expect(own.append(sessions[0] as SessionId, [user('too late')])).rejects.toMatchObject({ code: 'STORE_CLOSED' })
  })

  it('falls back to lone appends on a schema without append_batches (code deployed before its migration)', async () => {
    // given a database whose append_batches is gone, as before migration 0005
    const old = await createTestDatabase()
    const setup = await openStore({ connectionString: old.connectionString })
    await setup.close()
    const owner = new pg.Client({ connectionString: old.connectionString })
    await owner.connect()
    await owner.query('drop function turnlog.append_batches(json, json, json, json, json, json, json, json)')
    await owner.end()
    const own = await openStore({ connectionString: old.connectionString, migrate: false, groupCommit: { maxInFlight: 1 } })
    try {
      const sessions = await Promise.all([0, 1, 2].map(() => own.createSession()))
      // when appends that would share a group are made, twice
      for (const round of [0, 1]) {
        const results = await Promise.all(sessions.map((s, i) => own.append(s, [user(`r${round} s${i}`)])))
        // then every one is written, alone
        expect(results.map((r) => r.version)).toEqual([round + 1, round + 1, round + 1])
      }
    } finally {
      await own.close()
      await old.drop()
    }
  })

  it('refuses bad settings with INVALID_INPUT', async () => {
    await expect(
      openStore({ connectionString: db.connectionString, migrate: false, groupCommit: { maxBatches: 0 } }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await expect(
      openStore({ connectionString: db.connectionString, migrate: false, groupCommit: { maxInFlight: 1.5 } }),
    ).rejects.toMatchObject({ code: 'INVALID_INPUT' })
  })
})
