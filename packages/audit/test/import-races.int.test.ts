/**
 * `importEvents` introduces message ids and session ids like any other write, and goes through the same
 * arbiters (issue 13, items 3 and 7): an import racing an append of one of its message ids elsewhere
 * leaves the id in exactly one session (the loser gets `MESSAGE_CONFLICT` foreign_session), concurrent
 * imports of one file are one import, and a session id another tenant holds is `SESSION_EXISTS`, never
 * `DB_ERROR`. 8 stores, each with its own pool, on one database.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, writeOutcome, type TestDatabase } from '@turnlog/testing'
import { exportSessions, importEvents } from '@turnlog/audit'
import { sql } from 'kysely'
import { createLoginRole, dropLoginRoles, type LoginRole } from '../../postgres/test/security/support/security-fixtures.js'

const WRITERS = 8
const ROUNDS = 5

let sourceDb: TestDatabase
let targetDb: TestDatabase
let source: PostgresStore
let stores: PostgresStore[] = []
const roles: LoginRole[] = []

beforeAll(async () => {
  sourceDb = await createTestDatabase()
  targetDb = await createTestDatabase()
  source = await openStore({ connectionString: sourceDb.connectionString, pool: { max: 2 } })
  stores = []
  for (let i = 0; i < WRITERS; i++)
    stores.push(await openStore({ connectionString: targetDb.connectionString, pool: { max: 2 }, migrate: i === 0 }))
})

afterAll(async () => {
  for (const s of [source, ...stores]) await s.close()
  await sourceDb.drop()
  await targetDb.drop()
  await dropLoginRoles(roles)
})

function at<T>(list: readonly T[], i: number): T {
  const v = list[i]
  if (v === undefined) throw new Error(`no element ${i}`)
  return v
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const line of lines) out.push(line)
  return out
}

/** A session of the source store holding `messages`, exported. */
async function exported(messages: readonly Message[], tenantId?: string): Promise<{ id: SessionId; lines: string[] }> {
  const id = await source.createSession(tenantId === undefined ? {} : { tenantId })
  await source.append(id, messages)
  return { id, lines: await collect(exportSessions(source, { sessionIds: [id] })) }
}

const outcome = writeOutcome<string>

describe('importEvents racing other writers (Postgres, many connections)', () => {
  it('import vs append of the same new message id: one session holds it; the losers get MESSAGE_CONFLICT foreign_session', async () => {
    const won = { import: 0, append: 0 }
    for (let round = 0; round < ROUNDS; round++) {
      // given: a file whose session holds x, and a session per appending writer
      const x = createMessage({ role: 'user', content: `contended ${round}` })
      const file = await exported([createMessage({ role: 'system', content: 'be brief' }), x])
      const mine = await Promise.all(stores.map((s) => s.createSession()))

      // when: half the writers import the file, the other half append x to their own session
      const outcomes = await Promise.all(
        stores.map((s, w) =>
          w % 2 === 0 ? outcome(file.id, () => importEvents(s, file.lines)) : outcome(at(mine, w), () => s.append(at(mine, w), [x])),
        ),
      )

      // then: exactly one session holds x, by SQL
      const { rows } = await sql<{ session_id: string }>`
        select distinct session_id::text from turnlog.events where message_id = ${x.id} and content_hash is not null`.execute(
        at(stores, 0).db,
      )
      expect(rows).toHaveLength(1)
      const holder = at(rows, 0).session_id
      // the writers of the holder succeeded (every import of one file is that import), the others lost
      for (const o of outcomes) {
        if (o.who === holder) expect(o.ok).toBe(true)
        else expect(o).toMatchObject({ ok: false, code: 'MESSAGE_CONFLICT', reason: 'foreign_session' })
      }
      if (holder === file.id) won.import++
      else won.append++
      // and an imported session is complete or absent
      const { rows: imported } = await sql<{ n: string }>`select count(*) as n from turnlog.events where session_id = ${file.id}`.execute(
        at(stores, 0).db,
      )
      expect(Number(at(imported, 0).n)).toBe(holder === file.id ? 2 : 0)
    }
    expect(won.import + won.append).toBe(ROUNDS)
  })

  it('8 concurrent imports of one file are one import: every call succeeds, the log holds it once', async () => {
    // given
    const file = await exported([createMessage({ role: 'user', content: 'a' }), createMessage({ role: 'assistant', content: 'b' })])

    // when
    const results = await Promise.all(stores.map((s) => importEvents(s, file.lines)))

    // then
    expect(results.every((r) => r.sessions === 1 && r.eventsWritten + r.eventsSkipped === 2)).toBe(true)
    expect(results.reduce((n, r) => n + r.eventsWritten, 0)).toBe(2)
    const { rows } = await sql<{ n: string }>`select count(*) as n from turnlog.events where session_id = ${file.id}`.execute(
      at(stores, 0).db,
    )
    expect(at(rows, 0).n).toBe('2')
  })

  it('a file session whose id another tenant holds: SESSION_EXISTS, nothing of it written', async () => {
    // given: tenant A's login, and tenant B's session under the file's session id
    const a = await createLoginRole(targetDb, 'import_a', { groups: ['turnlog_writer'], tenant: 'imp-a' })
    roles.push(a)
    const file = await exported([createMessage({ role: 'user', content: 'mine' })], 'imp-a')
    await at(stores, 0).createSession({ id: file.id, tenantId: 'imp-b' })
    const tenantA = await openStore({ connectionString: a.connectionString, pool: { max: 1 }, migrate: false })
    try {
      // when
      const error = await importEvents(tenantA, file.lines).catch((e: unknown) => e)

      // then
      expect(isTurnlogError(error, 'SESSION_EXISTS')).toBe(true)
      const info = await at(stores, 0).getSession(file.id)
      expect({ tenant: info.tenantId, version: info.version }).toEqual({ tenant: 'imp-b', version: 0 })
    } finally {
      await tenantA.close()
    }
  })
})
