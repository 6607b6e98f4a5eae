/**
 * Property: with group commit, concurrent writers get exactly what each would get alone. Every run
 * draws 2–6 sessions, each with a sequence of appends (fresh messages, re-sends of its own earlier
 * messages, edits of them under the same id — a conflict —, stale or current expected versions, empty
 * batches). The sessions' writers run at once against a store that lets one group statement fly at a
 * time (so most appends share a group); each writer awaits its own appends in order. Each outcome
 * must equal the independent SessionModel's for that session (sessions share no ids, so the order the
 * writers interleave in does not matter), and afterwards every session's live list, transcript and
 * projection must equal the model's, inline and on rebuild (`checkSession`).
 */
import { afterAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { sql } from 'kysely'
import { createMessage, type Message, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { SessionModel, useTestStore } from '@turnlog/testing'
import { checkSession, create, expectSameOutcome, newStats, payloadArb, type PayloadSpec } from './support/projection-harness.js'

const NUM_RUNS = Number(process.env['TURNLOG_GROUP_RUNS'] ?? 60)

let store: PostgresStore
const stats = newStats()

useTestStore((t) => ({ store } = t), { pool: { max: 4 }, groupCommit: { maxBatches: 8, maxInFlight: 1 } })

afterAll(() => {
  console.log(`group-commit.prop (Postgres): ${JSON.stringify(stats)}`)
})

/** One append of a writer: fresh messages, re-sends and edits of earlier ones, an expected version. */
interface AppendSpec {
  readonly fresh: readonly PayloadSpec[]
  /** Indexes (mod the number created so far) of earlier messages to send again. */
  readonly resend: readonly number[]
  /** Re-send one earlier message with other content under its id (a conflict). */
  readonly edit: boolean
  /** null: no expected version; false: the current one; true: a stale one. */
  readonly stale: boolean | null
}

const appendArb: fc.Arbitrary<AppendSpec> = fc.record({
  fresh: fc.array(payloadArb, { minLength: 0, maxLength: 3 }),
  resend: fc.array(fc.nat(20), { maxLength: 2 }),
  edit: fc.boolean(),
  stale: fc.option(fc.boolean(), { nil: null }),
})

const writersArb = fc.array(fc.array(appendArb, { minLength: 1, maxLength: 6 }), { minLength: 2, maxLength: 6 })

describe('group commit (property)', () => {
  it('gives every concurrent writer the outcome the model gives it alone', async () => {
    await fc.assert(
      fc.asyncProperty(writersArb, fc.integer({ min: 0, max: 2 ** 31 - 1 }), async (writers, salt) => {
        stats.histories++
        const model = new SessionModel()
        const sessions: SessionId[] = []
        for (let i = 0; i < writers.length; i++) {
          const sid = await store.createSession()
          model.createSession(sid)
          sessions.push(sid)
        }
        await Promise.all(
          writers.map(async (appends, w) => {
            const sid = sessions[w] as SessionId
            const created: Message[] = []
            for (const [k, spec] of appends.entries()) {
              const fresh = spec.fresh.map(create)
              const resent =
                created.length === 0 ? [] : [...new Set(spec.resend.map((r) => r % created.length))].map((r) => created[r] as Message)
              const edited =
                spec.edit && created.length > 0
                  ? [
                      {
                        ...(created[(salt + k) % created.length] as Message),
                        payload: { role: 'user' as const, content: `edited ${salt} ${k}` },
                      } as Message,
                    ]
                  : []
              // an edited message is never also re-sent unchanged in the same batch (a batch names an id once)
              const batch = [...resent.filter((m) => !edited.some((e) => e.id === m.id)), ...edited, ...fresh]
              const current = model.version(sid) ?? 0
              const expectedVersion = spec.stale === null ? undefined : spec.stale ? current + 1 : current
              const options = expectedVersion === undefined ? {} : { expectedVersion }
              const outcome = await expectSameOutcome(
                'append',
                () => model.append(sid, batch, expectedVersion),
                () => store.append(sid, batch, options),
                stats,
              )
              if (outcome.ok) created.push(...fresh)
            }
          }),
        )
        for (const sid of sessions) await checkSession(store, model, sid, stats)
      }),
      { numRuns: NUM_RUNS },
    )
    // and the property did exercise groups: transactions that wrote several sessions
    const { rows } = await sql<{ n: string }>`
      select count(*) as n from (select tx_id from turnlog.events group by tx_id having count(distinct session_id) > 1) t`.execute(store.db)
    expect(Number(rows[0]?.n)).toBeGreaterThan(NUM_RUNS / 2)
  }, 240_000) // 60 histories of up to 6 concurrent writers: about 30 s on a quiet machine, 100+ s at load 16

  it('a message id claimed by two sessions in one group goes to exactly one of them', async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 2, max: 6 }), fc.integer({ min: 0, max: 5 }), async (n, extra) => {
        const shared = createMessage({ role: 'user', content: 'claimed by all' })
        const sessions = await Promise.all(Array.from({ length: n }, () => store.createSession()))
        const outcomes = await Promise.allSettled(
          sessions.map((s, i) =>
            store.append(s, [
              ...Array.from({ length: (i + extra) % 3 }, (_, k) => createMessage({ role: 'user', content: `own ${i} ${k}` })),
              shared,
            ]),
          ),
        )
        const won = outcomes.filter((o) => o.status === 'fulfilled')
        if (won.length !== 1) throw new Error(`${won.length} sessions got the shared id`)
        for (const o of outcomes) {
          if (o.status === 'rejected' && (o.reason as { code?: unknown }).code !== 'MESSAGE_CONFLICT') throw o.reason
        }
        const holders = (await Promise.all(sessions.map((s) => store.load(s)))).filter((l) => l.messages.some((m) => m.id === shared.id))
        if (holders.length !== 1) throw new Error(`${holders.length} sessions hold the shared id`)
      }),
      { numRuns: Math.max(10, Math.floor(NUM_RUNS / 3)) },
    )
  })
})
