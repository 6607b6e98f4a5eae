/**
 * Attacks the promise that payloads are stored exactly (schema.md `payload json`, "the provider
 * message, exact text"; guarantees.md, Identity): odd but valid strings — NUL, lone high and low
 * surrogates at either end, U+FEFF first (inside JSON), U+2028/2029, a literal `\u0000`, NFC next to
 * NFD, DEL and C1 controls — in values and keys (and those `meta` may hold in `meta`), on Postgres and PGlite, come back
 * identical (deep equality and the same content hash) through every read path: `load`, `load({ at })`,
 * `state`, `transcript` (original and revision), `events`, a subscription, `readCommittedEvents`, a
 * fork's copies, a compaction summary, and the evidence of a refused conflicting append.
 */
import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { readCommittedEvents, START_CHECKPOINT, type PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, useTestStoreOfKind, weirdStringArb } from '@turnlog/testing'
import fc from 'fast-check'

/** Strings a JSON text, a UTF-8 decoder or a JSON operator could each alter. */
const ODD = [
  '\u0000',
  'a\u0000b',
  '\ud800',
  '\udfff',
  'x\ud83d',
  '\ude00x',
  '\udc00\ud800',
  '\ufeffstarts with a BOM',
  'line\u2028para\u2029',
  '\\u0000 is six characters',
  'caf\u00e9 / cafe\u0301',
  '\u007f\u0080\u009f',
  '😀\u0000😀',
  '',
  '"quoted" \\ backslash \n\r\t',
]

/** The odd strings `meta` may hold (formats.md: no NUL, no lone surrogate in `meta`). */
// eslint-disable-next-line no-control-regex
const META_SAFE = ODD.filter((s) => !/\u0000|\p{Cs}/u.test(s))

/** A `json`-format payload carrying every odd string as a value and as a key, nested. */
function oddPayload(extra: string): Record<string, unknown> {
  const keyed: Record<string, unknown> = {}
  ODD.forEach((s, i) => (keyed[`${s}#${i}`] = s))
  return { values: [...ODD, extra], keyed, nested: { [extra]: { [ODD[2] as string]: [extra, { '\u0000': null }] } }, last: extra }
}

function expectSame(actual: Message<unknown> | undefined, expected: Message<unknown>): void {
  expect(actual?.id).toBe(expected.id)
  expect(actual?.payload).toStrictEqual(expected.payload)
  expect(contentHash({ payload: actual?.payload })).toBe(contentHash({ payload: expected.payload }))
  expect(actual?.meta).toStrictEqual(expected.meta)
}

describe.each(STORE_KINDS)('odd payload text round-trips exactly (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('through load, load({ at }), state, transcript, events, a subscription, readCommittedEvents, a fork, a compaction and conflict evidence', async () => {
    // given messages whose payloads and meta hold every odd string
    const session: SessionId = await store.createSession()
    const a = createMessage(oddPayload('first \ud800'), {
      format: 'json',
      meta: { note: META_SAFE.join('|'), [META_SAFE.join('')]: META_SAFE },
    })
    const b = createMessage({ role: 'user', content: ODD.join('') })
    const revised = { role: 'user', content: `revised ${ODD.join('')}` }
    const summary = createMessage(oddPayload('summary \udc00'), { format: 'json' })

    // when they are appended, one is revised, a fork is taken, a compaction replaces the first
    await store.append(session, [a, b])
    await store.revise(session, b.id, revised)
    const child = await store.fork(session, { at: b.id })
    await store.compact(session, { covered: [a.id], summary })
    const conflicting = createMessage(oddPayload('conflicting \ud800'), { format: 'json', id: a.id })
    const refused = await store.append(session, [conflicting]).catch((e: unknown) => e)

    // then every read path returns the exact payloads
    const bRevised = { ...b, payload: revised }
    const live = (await store.load(session)).messages
    expectSame(live[0], summary)
    expectSame(live[1], bRevised)
    const atTwo = (await store.load(session, { at: 2 })).messages
    expectSame(atTwo[0], a)
    expectSame(atTwo[1], b)
    const state = await store.state(session)
    expectSame(state.messages.get(a.id)?.message, a)
    const transcript = await store.transcript(session)
    expectSame(transcript.entries.find((e) => e.message.id === a.id)?.message, a)
    expectSame(transcript.entries.find((e) => e.message.id === b.id && e.revision === 0)?.message, b)
    expectSame(transcript.entries.find((e) => e.message.id === b.id && e.revision === 1)?.message, bRevised)
    const payloads: unknown[] = []
    for await (const event of store.events(session)) if (event.payload !== null) payloads.push(event.payload)
    expect(payloads).toStrictEqual([a.payload, b.payload, revised, summary.payload])
    const forked = (await store.load(child)).messages
    expectSame(forked[0], a)
    expectSame(forked[1], bRevised)
    expect(isTurnlogError(refused, 'MESSAGE_CONFLICT')).toBe(true)
    const evidence = await store.conflicts(session)
    expect(evidence.map((c) => c.incomingPayload)).toStrictEqual([conflicting.payload])

    // and a subscription and readCommittedEvents hand over the same payloads
    const delivered: unknown[] = []
    const sub = store.subscribe(
      { name: `odd-${kind}`, filter: { sessionId: session, types: ['message_appended', 'message_revised'] } },
      (event) => {
        delivered.push(event.payload)
      },
      { pollIntervalMs: 20 },
    )
    await sub.catchUp()
    await sub.stop()
    expect(delivered).toStrictEqual(payloads)
    const page = await readCommittedEvents(store.db, START_CHECKPOINT, { limit: 1000, filter: { sessionId: session } })
    expect(page.events.filter((e) => e.payload !== null).map((e) => e.payload)).toStrictEqual(payloads)
  })

  it('arbitrary odd strings in a payload come back with the same content hash from load and events', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(weirdStringArb, { minLength: 1, maxLength: 6 }), async (strings) => {
        // given a message whose values and keys are the generated strings
        const payload: Record<string, unknown> = { list: strings }
        strings.forEach((s, i) => (payload[`${i}:${s}`] = s))
        const message = createMessage(payload, { format: 'json' })
        const session = await store.createSession()
        // when it is appended and read back
        await store.append(session, [message])
        const loaded = (await store.load(session)).messages[0]
        const events: unknown[] = []
        for await (const event of store.events(session)) events.push(event.payload)
        // then it is the same value, with the same hash
        expectSame(loaded, message)
        expect(events).toStrictEqual([message.payload])
        // and appending it again is a duplicate, not a conflict
        expect((await store.append(session, [{ ...message }])).duplicates).toEqual([message.id])
      }),
      { numRuns: 25 },
    )
  })
})
