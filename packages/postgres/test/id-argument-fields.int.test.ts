/**
 * docs/errors.md: an `INVALID_INPUT` names the argument or option at fault in `details.field` wherever
 * one does. A malformed id given to a store call is such an error: before, the store parsed its ids
 * without saying which argument they came from (`details` held only `what` and `value`). Each call below
 * gets one bad id, everything else valid, and must name exactly that argument; nothing is written.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { caught, useTestStoreOfKind } from '@turnlog/testing'

const BAD = 'not-a-uuid'

describe('a malformed id names its argument (details.field), on PGlite', () => {
  let store: PostgresStore
  useTestStoreOfKind('pglite', (t) => ({ store } = t))

  it('in every store call that takes an id', async () => {
    // given a session holding one message
    const session: SessionId = await store.createSession()
    const m: Message = createMessage({ role: 'user', content: 'kept' })
    await store.append(session, [m])
    const before = await store.getSession(session)
    const calls: [string, () => unknown][] = [
      ['sessionId', () => store.append(BAD, [createMessage({ role: 'user', content: 'x' })])],
      ['sessionId', () => store.flush(BAD, [m])],
      ['sessionId', () => store.sync(BAD, [m])],
      ['sessionId', () => store.load(BAD)],
      ['sessionId', () => store.state(BAD)],
      ['sessionId', () => store.transcript(BAD)],
      ['sessionId', () => store.getSession(BAD)],
      ['sessionId', () => store.conflicts(BAD)],
      ['sessionId', async () => { for await (const e of store.events(BAD)) void e }], // prettier-ignore
      ['sessionId', () => store.rewind(BAD, { after: m.id })],
      ['target.after', () => store.rewind(session, { after: BAD })],
      ['target.from', () => store.rewind(session, { from: BAD })],
      ['messageId', () => store.revise(session, BAD, { role: 'user', content: 'y' })],
      ['messageId', () => store.finalize(session, BAD)],
      ['messageId', () => store.redact(session, BAD)],
      ['sessionId', () => store.fork(BAD, { at: m.id })],
      ['options.at', () => store.fork(session, { at: BAD })],
      ['options.id', () => store.fork(session, { at: m.id, id: BAD })],
      ['options.id', () => store.createSession({ id: BAD })],
      ['options.after', () => store.sessions({ after: BAD })],
      ['options.sessionId', () => store.rebuild({ sessionId: BAD })],
      ['covered[1]', () => store.compact(session, { covered: [m.id, BAD], summary: createMessage({ role: 'system', content: 's' }) })],
    ]

    for (const [field, call] of calls) {
      // when
      const error = await caught(call)

      // then
      expect({ field, code: isTurnlogError(error) ? error.code : error }).toEqual({ field, code: 'INVALID_INPUT' })
      expect({ field, got: (error as { details?: { field?: unknown } }).details?.field }).toEqual({ field, got: field })
    }
    // nothing written by any of them
    expect((await store.getSession(session)).version).toBe(before.version)
    expect((await store.sessions()).sessions).toHaveLength(1)
  })
})
