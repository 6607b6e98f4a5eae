import { describe, expect, it } from '@jest/globals'
import type { SessionStore } from '@turnlog/core'
import { assistant, eventsOf, expectTurnlogError, user, type ContractContext } from './contract-helpers.js'

/** `rebuild` in verify and repair mode on a healthy store, and `close()` → `STORE_CLOSED`. */
export function describeLifecycleContract(ctx: ContractContext): void {
  describe('rebuild', () => {
    it('verify reports no drift on a healthy session and writes nothing; repair rewrites it to the same list', async () => {
      // given: a session touched by every operation
      const store = ctx.store()
      const sid = await store.createSession()
      const [a, b, c, d] = [user('a'), assistant('b'), user('c'), assistant('d')]
      await store.append(sid, [a, b, c, d])
      await store.revise(sid, b.id, { role: 'assistant', content: 'b2' })
      await store.rewind(sid, { from: d.id })
      await store.compact(sid, { covered: [a.id], summary: user('s') })
      const child = await store.fork(sid, { at: b.id })
      const before = await store.load(sid)
      const progress: number[] = []

      // when
      const verified = await store.rebuild({ sessionId: sid, verify: true })
      const repaired = await store.rebuild({ sessionId: sid, onProgress: (p) => progress.push(p.done) })
      const verifiedChild = await store.rebuild({ sessionId: child, verify: true })

      // then
      expect(verified).toEqual({ sessions: 1, drift: [], rewritten: 0 })
      expect(repaired).toEqual({ sessions: 1, drift: [], rewritten: 1 })
      expect(verifiedChild).toEqual({ sessions: 1, drift: [], rewritten: 0 })
      expect(progress).toEqual([1])
      expect(await store.load(sid)).toEqual(before)
    })

    it('rebuild of an unknown session is SESSION_NOT_FOUND', async () => {
      await expectTurnlogError(
        ctx.store().rebuild({ sessionId: '0190f0f0-0000-7000-8000-000000000000', verify: true }),
        'SESSION_NOT_FOUND',
      )
    })
  })

  describe('close', () => {
    it('after close() every call is STORE_CLOSED; close() again is fine; the data stays', async () => {
      // given
      const opened = await ctx.open()
      const store: SessionStore = opened.store
      const sid = await store.createSession()
      const m = user('before close')
      await store.append(sid, [m])

      // when
      await store.close()
      await store.close()

      // then
      const calls: [string, () => Promise<unknown>][] = [
        ['createSession', () => store.createSession()],
        ['getSession', () => store.getSession(sid)],
        ['append', () => store.append(sid, [user('x')])],
        ['flush', () => store.flush(sid, [m])],
        ['load', () => store.load(sid)],
        ['load at', () => store.load(sid, { at: 1 })],
        ['events', () => eventsOf(store, sid)],
        ['sessions', () => store.sessions()],
        ['rewind', () => store.rewind(sid, { from: m.id })],
        ['compact', () => store.compact(sid, { covered: [m.id], summary: user('s') })],
        ['revise', () => store.revise(sid, m.id, { role: 'user', content: 'y' })],
        ['finalize', () => store.finalize(sid, m.id)],
        ['fork', () => store.fork(sid, { at: m.id })],
        ['transcript', () => store.transcript(sid)],
        ['state', () => store.state(sid)],
        ['rebuild', () => store.rebuild({ verify: true })],
        ['conflicts', () => store.conflicts(sid)],
      ]
      const codes: [string, unknown][] = []
      for (const [name, call] of calls) {
        try {
          await call()
          codes.push([name, 'succeeded'])
        } catch (error) {
          codes.push([name, (error as { code?: unknown }).code])
        }
      }
      expect(codes).toEqual(calls.map(([name]) => [name, 'STORE_CLOSED']))
      await opened.close()
      expect((await ctx.store().load(sid)).messages.map((x) => x.id)).toEqual([m.id])
    })
  })
}
