/**
 * A flush checks only the slots a session's list gained since its last flush (`FlushedList`): the same
 * object at the same index is taken as checked, with no hashing and no cache lookup. These properties
 * edit one live list the way runtimes do between flushes (in place and as new arrays: grow, rewind,
 * cut from the middle, move a message, list it twice, replace it with a copy, a frozen copy, a plain
 * object or a changed message under its id, edit a plain object in place, scaffolding, garbage) and
 * require:
 * - the check of every list equals `checkBatch`'s of the same list from nothing (same messages, hashes,
 *   copies, first mismatch, same error), whatever the lists before it were;
 * - every flush of a real store (Postgres) equals the independent SessionModel's flush of that list,
 *   for two sessions whose lists share message objects, and the stored transcript equals the model's.
 */
import { afterAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { contentHash, createMessage, isTurnlogError, toMessage, type Message, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { SessionModel, useTestStore } from '@turnlog/testing'
import { checkBatch } from '../src/store/check-batch.js'
import { FlushedList } from '../src/store/flushed-list.js'
import { expectSameOutcome, newStats } from './support/projection-harness.js'

const NUM_RUNS = Number(process.env['TURNLOG_FLUSH_LIST_RUNS'] ?? 60)

let store: PostgresStore
const stats = newStats()
useTestStore((t) => ({ store } = t))

afterAll(() => {
  console.log(`flush-kept-list.prop (Postgres): ${JSON.stringify(stats)}`)
})

/** How a slot is replaced by another value for the same message. */
type CopyKind = 'minted' | 'plain' | 'frozen'

/** One edit of a live list between two flushes. */
type Edit =
  | { readonly k: 'new'; readonly n: number }
  | { readonly k: 'scaffold' }
  | { readonly k: 'pop'; readonly n: number }
  | { readonly k: 'cut'; readonly at: number; readonly n: number }
  | { readonly k: 'move'; readonly from: number; readonly to: number }
  | { readonly k: 'again'; readonly at: number }
  | { readonly k: 'copy'; readonly at: number; readonly how: CopyKind }
  | { readonly k: 'edit'; readonly at: number; readonly how: CopyKind }
  | { readonly k: 'mutate'; readonly at: number }
  | { readonly k: 'foreign'; readonly at: number }
  | { readonly k: 'garbage'; readonly value: unknown }
  | { readonly k: 'newArray' }

const at = fc.nat({ max: 40 })
const how = fc.constantFrom<CopyKind>('minted', 'plain', 'frozen')
const editArb = (garbage: boolean): fc.Arbitrary<Edit> =>
  fc.oneof(
    { weight: 6, arbitrary: fc.record({ k: fc.constant('new' as const), n: fc.integer({ min: 1, max: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('scaffold' as const) }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('pop' as const), n: fc.integer({ min: 1, max: 3 }) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('cut' as const), at, n: fc.integer({ min: 1, max: 2 }) }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('move' as const), from: at, to: at }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('again' as const), at }) },
    { weight: 2, arbitrary: fc.record({ k: fc.constant('copy' as const), at, how }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('edit' as const), at, how }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('mutate' as const), at }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('foreign' as const), at }) },
    { weight: 1, arbitrary: fc.record({ k: fc.constant('newArray' as const) }) },
    ...(garbage
      ? [{ weight: 1, arbitrary: fc.record({ k: fc.constant('garbage' as const), value: fc.constantFrom<unknown>(42, {}, null) }) }]
      : []),
  )

let counter = 0
const fresh = (): Message => createMessage({ role: counter % 2 === 0 ? 'user' : 'assistant', content: `m${counter++}` })

/** The same message (id, content, envelope) as another value. */
function copyOf(value: unknown, kind: CopyKind): unknown {
  const plain = JSON.parse(JSON.stringify(value)) as Record<string, unknown>
  if (kind === 'minted') return toMessage(plain)
  return kind === 'frozen' ? Object.freeze({ ...(value as object) }) : plain
}

/** The message at a slot with its content changed, under the same id. */
function editOf(value: unknown, kind: CopyKind): unknown {
  const m = toMessage(value)
  const edited = createMessage({ role: 'user', content: `edited ${counter++}` }, { id: m.id, createdAt: m.createdAt })
  return kind === 'minted' ? edited : copyOf(edited, kind)
}

/** True for a value `toMessage` accepts. */
function messageLike(value: unknown): boolean {
  try {
    toMessage(value)
    return true
  } catch {
    return false
  }
}

/** Applies `edit` to `live` (in place, or a new array for `newArray`); `other` is another session's list. */
function apply(live: unknown[], edit: Edit, other: readonly unknown[]): unknown[] {
  const slot = (i: number): number => i % Math.max(1, live.length)
  switch (edit.k) {
    case 'new':
      for (let i = 0; i < edit.n; i++) live.push(fresh())
      break
    case 'scaffold':
      live.push(createMessage({ role: 'user', content: 'continue' }, { ephemeral: true }))
      break
    case 'pop':
      live.splice(Math.max(0, live.length - edit.n))
      break
    case 'cut':
      live.splice(slot(edit.at), edit.n)
      break
    case 'move':
      if (live.length > 1) live.splice(slot(edit.to), 0, ...live.splice(slot(edit.from), 1))
      break
    case 'again':
      if (live.length > 0) live.push(live[slot(edit.at)])
      break
    case 'copy':
    case 'edit':
      // (a slot holding garbage stays as it is)
      if (live.length > 0 && messageLike(live[slot(edit.at)]))
        live[slot(edit.at)] = (edit.k === 'copy' ? copyOf : editOf)(live[slot(edit.at)], edit.how)
      break
    case 'mutate': {
      // a plain object's content edited in place (a frozen message cannot be)
      const v = live[slot(edit.at)] as { payload?: { content?: unknown } } | undefined
      if (typeof v?.payload === 'object' && !Object.isFrozen(v.payload)) v.payload.content = `mutated ${counter++}`
      break
    }
    case 'foreign':
      if (other.length > 0) live.splice(slot(edit.at), 0, other[edit.at % other.length])
      break
    case 'garbage':
      live.push(edit.value)
      break
    case 'newArray':
      return [...live]
  }
  return live
}

/** A check's result in comparable form (messages by id, content and envelope), or its error code. */
function comparable(
  check: () => { unique: readonly Message[]; hashes: readonly string[]; length: number; repeated: ReadonlySet<string>; mismatch: unknown },
): unknown {
  try {
    const c = check()
    const m = c.mismatch as { first: Message; firstHash: string; other: Message; otherHash: string } | null
    return {
      unique: c.unique.slice(0, c.length).map((x) => JSON.stringify(x)),
      hashes: c.hashes.slice(0, c.length),
      repeated: [...c.repeated].sort(),
      mismatch: m === null ? null : { id: m.first.id, firstHash: m.firstHash, otherHash: m.otherHash, other: JSON.stringify(m.other) },
    }
  } catch (error) {
    return { error: isTurnlogError(error) ? error.code : String(error) }
  }
}

describe('the check of a flushed list grown or changed between flushes', () => {
  it('property: equals checkBatch of the same list from nothing, after any edits', () => {
    fc.assert(
      fc.property(fc.array(fc.array(editArb(true), { minLength: 1, maxLength: 4 }), { minLength: 1, maxLength: 25 }), (rounds) => {
        let live: unknown[] = []
        const other: unknown[] = [fresh(), fresh()]
        let kept: FlushedList | undefined
        for (const round of rounds) {
          for (const edit of round) live = apply(live, edit, other)
          // when: the flush's check, from what the last one kept (as the flush keeps it)
          let next = kept
          const actual = comparable(() => {
            const scan = FlushedList.check(kept, live)
            next = scan.mismatch === null ? scan.list : undefined
            return scan
          })
          kept = next
          // then
          const expected = comparable(() => {
            const batch = checkBatch(live, 'live', true)
            return { ...batch, length: batch.unique.length }
          })
          expect(actual).toEqual(expected)
          // and a list kept after a check that passed covers at most the list's slots
          if (!('error' in (actual as object))) expect(kept?.slots ?? 0).toBeLessThanOrEqual(live.length)
        }
      }),
      { numRuns: NUM_RUNS * 5 },
    )
  })

  it('a list that diverged starts over: the same slot with another object is checked again', () => {
    // given: a flushed list of three messages
    const [a, b, c] = [fresh(), fresh(), fresh()] as [Message, Message, Message]
    const first = FlushedList.check(undefined, [a, b, c])
    const edited = createMessage({ role: 'user', content: 'b, edited' }, { id: b.id })

    // when: the same list object edited in place, then a copy that only grew
    const live = [a, b, c]
    live[1] = edited
    live.push(b)
    const scan = FlushedList.check(first.list, live)

    // then: the edit is seen (b listed with two contents), in a new list
    expect(scan.list).not.toBe(first.list)
    expect(scan.mismatch).toMatchObject({ first: edited, firstHash: contentHash(edited), other: b, otherHash: contentHash(b) })
    expect(scan.unique.slice(0, scan.length)).toEqual([a, edited, c])
  })
})

describe('flush of lists edited between flushes, against the model', () => {
  it('property: two sessions sharing message objects, every flush as the model says, the transcripts too', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.boolean(), fc.array(editArb(false), { minLength: 1, maxLength: 3 })), { minLength: 1, maxLength: 14 }),
        async (rounds) => {
          const model = new SessionModel()
          const sessions: { sid: SessionId; live: unknown[] }[] = []
          for (let i = 0; i < 2; i++) {
            const sid = await store.createSession()
            model.createSession(sid)
            sessions.push({ sid, live: [] })
          }
          for (const [second, edits] of rounds) {
            const [s, other] = (second ? [sessions[1], sessions[0]] : [sessions[0], sessions[1]]) as [
              (typeof sessions)[0],
              (typeof sessions)[0],
            ]
            for (const edit of edits) s.live = apply(s.live, edit, other.live)
            const list = s.live as Message[]
            await expectSameOutcome(
              'flush',
              () =>
                model.flush(
                  s.sid,
                  list.map((v) => toMessage(v)),
                ),
              () => store.flush(s.sid, list),
              stats,
            )
          }
          for (const s of sessions) {
            const loaded = await store.load(s.sid)
            const expected = model.load(s.sid)
            if (!expected.ok) throw new Error('the model lost a session')
            expect(loaded.messages.map((m) => [m.id, contentHash(m)])).toEqual(expected.value.messages.map((m) => [m.id, m.hash]))
          }
        },
      ),
      { numRuns: NUM_RUNS },
    )
  })
})
