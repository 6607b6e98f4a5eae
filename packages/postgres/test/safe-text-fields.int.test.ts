/**
 * docs/errors.md: an `INVALID_INPUT` names the argument or option at fault in `details.field` wherever
 * one does. An engine-visible string (externalId, tenant, reason, a subscription name) holding NUL or a
 * lone surrogate, or such a string in a message's `meta` or a compaction's `metadata`, was refused with
 * only `details.what` (`'externalId'`, `'reason'`: not which argument, nor which message of a batch).
 * Each call below gets one such value, everything else valid, and must name exactly that argument;
 * nothing is written.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { dropSubscription, rebaseSubscription, type PostgresStore } from '@turnlog/postgres'
import { caught, useTestStoreOfKind } from '@turnlog/testing'

const NUL = 'a\u0000b'
const LONE = 'x\ud800y'

/** A plain message value (as one read back from JSON) carrying `extra`: the store checks it as given. */
function withExtra(m: Message, extra: Record<string, unknown>): Message {
  return { ...m, ...extra } as Message
}

describe('an unsafe engine-visible string names its argument (details.field), on PGlite', () => {
  let store: PostgresStore
  useTestStoreOfKind('pglite', (t) => ({ store } = t))

  it('in every store call that checks one', async () => {
    // given a session holding one message
    const session: SessionId = await store.createSession()
    const m: Message = createMessage({ role: 'user', content: 'kept' })
    await store.append(session, [m])
    const before = await store.getSession(session)
    const fresh = (): Message => createMessage({ role: 'user', content: 'new' })
    const summary = (): Message => createMessage({ role: 'system', content: 'summary' })
    const calls: [string, () => unknown][] = [
      ['messages[1].externalId', () => store.append(session, [fresh(), withExtra(fresh(), { externalId: NUL })])],
      ['messages[0].externalScope', () => store.append(session, [withExtra(fresh(), { externalId: 'e', externalScope: LONE })])],
      ['messages[0].meta', () => store.append(session, [withExtra(fresh(), { meta: { note: NUL } })])],
      ['messages[0].meta', () => store.append(session, [withExtra(fresh(), { meta: { [LONE]: 1 } })])],
      ['live[2].externalId', () => store.flush(session, [m, fresh(), withExtra(fresh(), { externalId: LONE })])],
      ['live[1].meta', () => store.flush(session, [m, withExtra(fresh(), { meta: { deep: [{ k: NUL }] } })])],
      ['list[1].externalId', () => store.sync(session, [m, withExtra(fresh(), { externalId: NUL })])],
      ['summary.externalId', () => store.compact(session, { covered: [m.id], summary: withExtra(summary(), { externalId: NUL }) })],
      [
        'summary[1].meta',
        () => store.compact(session, { covered: [m.id], summary: [summary(), withExtra(summary(), { meta: { a: NUL } })] }),
      ],
      ['reason', () => store.compact(session, { covered: [m.id], summary: summary(), reason: NUL })],
      ['metadata', () => store.compact(session, { covered: [m.id], summary: summary(), metadata: { a: LONE } })],
      // named as its sibling compaction.summaryIds is (the sync contract pins that one)
      ['compaction.reason', () => {
        const s = summary()
        return store.sync(session, [s], { compaction: { summaryIds: [s.id], reason: NUL } })
      }], // prettier-ignore
      ['options.reason', () => store.rewind(session, { from: m.id }, { reason: NUL })],
      ['options.reason', () => store.redact(session, m.id, { reason: LONE })],
      ['options.tenantId', () => store.createSession({ tenantId: NUL })],
      ['options.tenantId', () => store.sessions({ tenantId: LONE })],
      ['config.name', () => store.subscribe({ name: NUL }, () => {})],
      ['options.connectionString', () => store.subscribe({ name: 'n' }, () => {}, { connectionString: NUL })],
      ['name', () => dropSubscription(store, NUL)],
      ['name', () => rebaseSubscription(store, LONE, 'start' as never)],
    ]

    for (const [field, call] of calls) {
      // when
      const error = await caught(call)

      // then
      expect({ field, code: isTurnlogError(error) ? error.code : error }).toEqual({ field, code: 'INVALID_INPUT' })
      expect({ field, got: (error as { details?: { field?: unknown } }).details?.field }).toEqual({ field, got: field })
      expect({ field, message: (error as Error).message.startsWith(`${field} `) }).toEqual({ field, message: true })
    }
    // nothing written by any of them
    expect((await store.getSession(session)).version).toBe(before.version)
    expect((await store.sessions()).sessions).toHaveLength(1)
  })

  it('names the slot of the whole live list when flush checks only the slots after those it kept', async () => {
    // given a session whose last flush kept its list [a, b] (frozen messages made by core)
    const session = await store.createSession()
    const [a, b] = [createMessage({ role: 'user', content: 'a' }), createMessage({ role: 'assistant', content: 'b' })]
    await store.flush(session, [a, b])

    // when the list grows by a good message and a bad one
    const error = await caught(() =>
      store.flush(session, [
        a,
        b,
        createMessage({ role: 'user', content: 'c' }),
        withExtra(createMessage({ role: 'user', content: 'd' }), { meta: { x: NUL } }),
      ]),
    )

    // then the bad one is named by its index in the list, not in the part checked
    expect((error as { details?: unknown }).details).toEqual({ field: 'live[3].meta' })
    expect((await store.getSession(session)).version).toBe(2)
  })

  it('also when the value is not a string or is too long', async () => {
    // when
    const notString = await caught(() => store.createSession({ tenantId: 42 as never }))
    const tooLong = await caught(() => store.sessions({ tenantId: 't'.repeat(4097) }))

    // then
    expect((notString as { details?: unknown }).details).toEqual({ field: 'options.tenantId' })
    expect((tooLong as { details?: unknown }).details).toEqual({ field: 'options.tenantId' })
  })
})
