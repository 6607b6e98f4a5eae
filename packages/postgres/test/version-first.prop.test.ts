/**
 * `expectedVersion` is checked before anything else about the session's state, by every write that
 * takes it (append, flush, rewind, compact, revise, finalize). Incident (issue 13, item 8): `revise`
 * and `finalize` with a stale `expectedVersion` on a message retracted meanwhile threw
 * `UNKNOWN_MESSAGE`, and an `append` with a stale version and a conflicting message threw
 * `MESSAGE_CONFLICT`: the caller was told about a state it had never seen instead of "reload".
 *
 * The class: any write sent with the version read before a random intervening write fails with
 * `VERSION_CONFLICT` and writes nothing, unless it is a replay of what is already in effect (a no-op
 * that reports `unchanged` / only duplicates / the placed summary, and also writes nothing).
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, isTurnlogError, type Message, type MessageId, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'

let store: PostgresStore

useTestStore((t) => ({ store } = t), { pool: { max: 2 } })

/** A session of four messages, the last one partial (streaming), as a stale writer last saw it. */
interface Fixture {
  readonly id: SessionId
  readonly messages: readonly Message[]
  /** A message stored in another session. */
  readonly foreign: Message
}

async function fixture(): Promise<Fixture> {
  const id = await store.createSession()
  const messages = [
    createMessage({ role: 'system', content: 'be brief' }),
    createMessage({ role: 'user', content: 'hi' }),
    createMessage({ role: 'assistant', content: 'hello' }),
    createMessage({ role: 'assistant', content: 'stream' }, { status: 'partial' }),
  ]
  await store.append(id, messages)
  const other = await store.createSession()
  const foreign = createMessage({ role: 'user', content: 'elsewhere' })
  await store.append(other, [foreign])
  return { id, messages, foreign }
}

function pick(f: Fixture, k: number): Message {
  const m = f.messages[k]
  if (!m) throw new Error(`no message ${k}`)
  return m
}

/** A write, by name; `run` sends it with `expectedVersion` (an intervening write ignores it). */
type Write = { readonly name: string; readonly run: (f: Fixture, expectedVersion: number) => Promise<unknown> }

const index = fc.integer({ min: 0, max: 3 })

/** Writes the stale caller may send (each valid against the state the caller saw). */
const staleWrite: fc.Arbitrary<Write> = fc.oneof(
  index.map((k) => ({
    name: `append new after ${k}`,
    run: (f: Fixture, v: number) => store.append(f.id, [createMessage({ role: 'user', content: `new ${k}` })], { expectedVersion: v }),
  })),
  index.map((k) => ({
    name: `append edited ${k}`,
    run: (f: Fixture, v: number) =>
      store.append(f.id, [{ ...pick(f, k), payload: { role: 'user', content: `edited ${k}` } }], { expectedVersion: v }),
  })),
  fc.constant({ name: 'append foreign', run: (f: Fixture, v: number) => store.append(f.id, [f.foreign], { expectedVersion: v }) }),
  fc.constant({
    name: 'flush live + new',
    run: (f: Fixture, v: number) =>
      store.flush(f.id, [...f.messages, createMessage({ role: 'user', content: 'next' })], { expectedVersion: v }),
  }),
  index.map((k) => ({
    name: `rewind after ${k}`,
    run: (f: Fixture, v: number) => store.rewind(f.id, { after: pick(f, k).id }, { expectedVersion: v }),
  })),
  index.map((k) => ({
    name: `rewind from ${k}`,
    run: (f: Fixture, v: number) => store.rewind(f.id, { from: pick(f, k).id }, { expectedVersion: v }),
  })),
  index.map((k) => ({
    name: `compact ${k}`,
    run: (f: Fixture, v: number) =>
      store.compact(f.id, {
        covered: [pick(f, k).id],
        summary: createMessage({ role: 'system', content: `summary ${k}` }),
        expectedVersion: v,
      }),
  })),
  index.map((k) => ({
    name: `compact ${k} with a foreign summary`,
    run: (f: Fixture, v: number) => store.compact(f.id, { covered: [pick(f, k).id], summary: f.foreign, expectedVersion: v }),
  })),
  index.map((k) => ({
    name: `revise ${k}`,
    run: (f: Fixture, v: number) =>
      store.revise(f.id, pick(f, k).id, { role: 'assistant', content: `revised ${k}` }, { expectedVersion: v }),
  })),
  index.map((k) => ({
    name: `finalize ${k}`,
    run: (f: Fixture, v: number) => store.finalize(f.id, pick(f, k).id, undefined, { expectedVersion: v }),
  })),
  index.map((k) => ({
    name: `finalize ${k} with content`,
    run: (f: Fixture, v: number) =>
      store.finalize(f.id, pick(f, k).id, { role: 'assistant', content: `final ${k}` }, { expectedVersion: v }),
  })),
)

/** Writes another writer makes meanwhile (each succeeds and moves the version). */
const interveningWrite: fc.Arbitrary<Write> = fc.oneof(
  fc.constant({ name: 'append', run: (f: Fixture) => store.append(f.id, [createMessage({ role: 'user', content: 'meanwhile' })]) }),
  fc
    .integer({ min: 0, max: 2 })
    .map((k) => ({ name: `rewind after ${k}`, run: (f: Fixture) => store.rewind(f.id, { after: pick(f, k).id }) })),
  index.map((k) => ({ name: `rewind from ${k}`, run: (f: Fixture) => store.rewind(f.id, { from: pick(f, k).id }) })),
  index.map((k) => ({
    name: `revise ${k}`,
    run: (f: Fixture) => store.revise(f.id, pick(f, k).id, { role: 'assistant', content: `other ${k}` }),
  })),
  fc.constant({ name: 'finalize 3', run: (f: Fixture) => store.finalize(f.id, pick(f, 3).id) }),
  index.map((k) => ({
    name: `compact ${k}`,
    run: (f: Fixture) =>
      store.compact(f.id, { covered: [pick(f, k).id], summary: createMessage({ role: 'system', content: `their summary ${k}` }) }),
  })),
)

/** True for a result that says the call changed nothing (a replay). */
function isNoOp(result: unknown): boolean {
  const r = result as { unchanged?: boolean; appended?: readonly MessageId[]; retracted?: readonly MessageId[] }
  return (
    r.unchanged === true ||
    (Array.isArray(r.appended) && r.appended.length === 0) ||
    (Array.isArray(r.retracted) && r.retracted.length === 0)
  )
}

describe('every write checks expectedVersion first (property, Postgres)', () => {
  it('a write sent with the version read before an intervening write: VERSION_CONFLICT (or a no-op replay), nothing written', async () => {
    await fc.assert(
      fc.asyncProperty(interveningWrite, staleWrite, async (between, stale) => {
        // given: the caller read version v, then another writer moved the session
        const f = await fixture()
        const seen = (await store.getSession(f.id)).version
        await between.run(f, seen)
        const moved = (await store.getSession(f.id)).version
        expect(moved).toBeGreaterThan(seen)

        // when: the caller writes expecting v
        let outcome: { ok: true; value: unknown } | { ok: false; code: string }
        try {
          outcome = { ok: true, value: await stale.run(f, seen) }
        } catch (error) {
          if (!isTurnlogError(error)) throw error
          outcome = { ok: false, code: error.code }
        }

        // then: VERSION_CONFLICT, or a replay of what is in effect; either way nothing was written
        const label = `${between.name} then stale ${stale.name}`
        if (outcome.ok) expect({ label, noOp: isNoOp(outcome.value) }).toEqual({ label, noOp: true })
        else expect({ label, code: outcome.code }).toEqual({ label, code: 'VERSION_CONFLICT' })
        expect({ label, version: (await store.getSession(f.id)).version }).toEqual({ label, version: moved })
      }),
      { numRuns: 60 },
    )
  })

  it('regression (issue 13 item 8): revise and finalize of a message retracted meanwhile, stale version → VERSION_CONFLICT', async () => {
    // given: the caller saw version v; another writer rewound the partial message away
    const f = await fixture()
    const seen = (await store.getSession(f.id)).version
    await store.rewind(f.id, { from: pick(f, 3).id })

    // when
    const revise = await store
      .revise(f.id, pick(f, 3).id, { role: 'assistant', content: 'done' }, { expectedVersion: seen })
      .catch((e: unknown) => e)
    const finalize = await store.finalize(f.id, pick(f, 3).id, undefined, { expectedVersion: seen }).catch((e: unknown) => e)
    const append = await store
      .append(f.id, [{ ...pick(f, 1), payload: { role: 'user', content: 'edited' } }], { expectedVersion: seen })
      .catch((e: unknown) => e)

    // then
    expect([revise, finalize, append].map((e) => (isTurnlogError(e) ? e.code : e))).toEqual([
      'VERSION_CONFLICT',
      'VERSION_CONFLICT',
      'VERSION_CONFLICT',
    ])
    // and with the current version the real problem shows
    const current = (await store.getSession(f.id)).version
    const again = await store
      .revise(f.id, pick(f, 3).id, { role: 'assistant', content: 'done' }, { expectedVersion: current })
      .catch((e: unknown) => e)
    expect(isTurnlogError(again, 'UNKNOWN_MESSAGE')).toBe(true)
  })
})
