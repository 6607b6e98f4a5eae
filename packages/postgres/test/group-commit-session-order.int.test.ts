/**
 * docs/guarantees.md, Ordering: within one store, a session's appends leave in call order: the group
 * commit holds a session's next batch until its previous one returned. Row locks usually hide an
 * overlap (the second statement just waits for the first's lock), so these tests look at the wire: a
 * driver hook logs when each append statement was handed to the driver and when its reply came back,
 * and holds the replies of one session's statements back so that an overlap cannot go unseen. For every
 * path the first batch can take (alone; in a group; left out of a group and run alone; in a group the
 * server refused as a whole, then alone) no statement of that session may start before the previous one
 * returned.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import fc from 'fast-check'
import { sql } from 'kysely'
import { appendedSessions, logStatements, type LoggedStatement, type StatementLog } from './support/statement-log.js'

let db: TestDatabase
let store: PostgresStore
let log: StatementLog

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  // the default group commit: up to 32 batches a group, 2 groups in flight (a free slot is what a
  // scheduler that forgot a session's batch in flight would use)
  store = await openStore({ connectionString: db.connectionString, migrate: false })
  log = logStatements(db.name)
})

afterEach(() => {
  log.hold = () => 0
  log.fail = () => undefined
})

afterAll(async () => {
  log?.restore()
  await store?.close()
  await db?.drop()
})

const msgs = (label: string, n: number): Message[] =>
  Array.from({ length: n }, (_, i) => createMessage({ role: 'user', content: `${label} ${i + 1}` }))
const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

async function waitFor(what: string, predicate: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`)
    await sleep(2)
  }
}

/** The append statements that wrote `session`, in the order they were sent. */
const statementsOf = (session: string, from = 0): LoggedStatement[] =>
  log.statements.slice(from).filter((s) => appendedSessions(s).includes(session))

/** Fails with the offending pair when two of the session's statements were in flight at once. */
function expectOneAtATime(session: string, from = 0): void {
  const own = statementsOf(session, from)
  for (let i = 1; i < own.length; i++) {
    const [before, after] = [own[i - 1]!, own[i]!]
    if (!(after.start >= before.end)) {
      throw new Error(
        `statement ${i + 1} of session ${session} started ${(before.end - after.start).toFixed(1)} ms before statement ${i} returned`,
      )
    }
  }
}

async function messageIds(session: SessionId): Promise<string[]> {
  const { rows } = await sql<{ message_id: string }>`
    select message_id::text as message_id from turnlog.events where session_id = ${session} and type = 'message_appended' order by seq`.execute(
    store.db,
  )
  return rows.map((r) => r.message_id)
}

/** A refusal the server makes too rarely to provoke on demand; like it, it proves nothing was committed. */
const deadlock = (): Error => Object.assign(new Error('deadlock detected (injected)'), { code: '40P01' })

type FirstPath = 'alone' | 'grouped' | 'left out of its group, then alone' | 'its group refused as a whole, then alone'

describe("a session's next batch waits for its previous one", () => {
  it.each<FirstPath>(['alone', 'grouped', 'left out of its group, then alone', 'its group refused as a whole, then alone'])(
    'first batch %s: the second starts only after the first returned; other sessions go on meanwhile',
    async (path) => {
      // given: sessions, and replies to s's statements held back 120 ms
      const [s, t, u, v] = await Promise.all([store.createSession(), store.createSession(), store.createSession(), store.createSession()])
      const from = log.statements.length
      log.hold = (st) => (appendedSessions(st).includes(s) ? 120 : 0)
      let refused = false
      if (path === 'its group refused as a whole, then alone') {
        log.fail = (st) => {
          if (refused || !st.text.includes('turnlog.append_batches(') || !appendedSessions(st).includes(s)) return undefined
          refused = true
          return deadlock()
        }
      }
      const first = msgs('s first', 2)
      const second = msgs('s second', 3)

      // when: s's first batch goes out by the path under test ...
      const firstCall = store.append(s, first, path === 'left out of its group, then alone' ? { expectedVersion: 99 } : {})
      const others = path === 'alone' ? [] : [store.append(t, msgs('t', 1)), store.append(u, msgs('u', 2))]
      await waitFor("s's first statement", () => statementsOf(s, from).length >= 1)
      // ... and while it is in flight, s appends again, together with another session
      const secondCall = store.append(s, second)
      const vCall = store.append(v, msgs('v', 1))
      const firstOutcome = await firstCall.then(
        (r) => r,
        (e: unknown) => e,
      )
      const [secondResult, vResult] = await Promise.all([secondCall, vCall])
      await Promise.all(others)

      // then: s's statements never overlapped, and s's second batch was sent after its first returned
      expectOneAtATime(s, from)
      const own = statementsOf(s, from)
      const expectedStatements = path === 'alone' || path === 'grouped' ? 2 : 3
      expect(own).toHaveLength(expectedStatements)
      expect(appendedSessions(own[own.length - 1]!)).toContain(s)
      // the other session's append of the same moment was not held back behind s
      const vStatement = log.statements.slice(from).find((st) => appendedSessions(st).includes(v) && !appendedSessions(st).includes(s))
      expect(vStatement).toBeDefined()
      expect(vStatement!.start).toBeLessThan(own[own.length - 2]!.end)
      expect(vResult.appended).toHaveLength(1)
      // and the log has s's batches in call order
      if (path === 'left out of its group, then alone') {
        expect(isTurnlogError(firstOutcome, 'VERSION_CONFLICT')).toBe(true)
        expect(await messageIds(s)).toEqual(second.map((m) => m.id))
      } else {
        expect(firstOutcome).toMatchObject({ version: 2 })
        expect(secondResult.version).toBe(5)
        expect(await messageIds(s)).toEqual([...first, ...second].map((m) => m.id))
      }
      if (path === 'its group refused as a whole, then alone') expect(refused).toBe(true)
    },
  )

  it('random schedules: per session one statement in flight at a time, and the log in call order', async () => {
    // given: three sessions; each run appends a few batches to them at random moments (same tick or
    // later), some with a wrong expectedVersion (left out of their group, refused alone), with random
    // reply delays per statement
    const sessions = await Promise.all([store.createSession(), store.createSession(), store.createSession()])
    const call = fc.record({
      session: fc.integer({ min: 0, max: 2 }),
      size: fc.integer({ min: 1, max: 3 }),
      stale: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
      gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 15 })),
    })
    await fc.assert(
      fc.asyncProperty(
        fc.array(call, { minLength: 2, maxLength: 10 }),
        fc.array(fc.integer({ min: 0, max: 20 }), { minLength: 1, maxLength: 8 }),
        async (calls, delays) => {
          const from = log.statements.length
          let n = 0
          log.hold = () => delays[n++ % delays.length]!
          const before = await Promise.all(sessions.map((s) => messageIds(s)))
          // when
          const issued: { session: number; batch: Message[]; outcome: Promise<unknown> }[] = []
          for (const c of calls) {
            if (c.gapMs > 0) await sleep(c.gapMs)
            const batch = msgs(`call ${issued.length}`, c.size)
            const outcome = store.append(sessions[c.session]!, batch, c.stale ? { expectedVersion: 10_000 } : {}).then(
              () => true,
              (e: unknown) => {
                if (isTurnlogError(e, 'VERSION_CONFLICT')) return false
                throw e
              },
            )
            issued.push({ session: c.session, batch, outcome })
          }
          const written = await Promise.all(issued.map((i) => i.outcome))
          // then
          for (const [k, s] of sessions.entries()) {
            expectOneAtATime(s, from)
            const expected = issued.filter((i, j) => i.session === k && written[j] === true).flatMap((i) => i.batch.map((m) => m.id))
            expect(await messageIds(s)).toEqual([...before[k]!, ...expected])
          }
        },
      ),
      { numRuns: 15 },
    )
  })
})
