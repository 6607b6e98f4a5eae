import { describe, expect, it } from '@jest/globals'
import { applyCompact, applyRevision, applyRewind, createMessage, isTurnlogError, type Message } from '@turnlog/core'

const msg = (content: string, ephemeral = false): Message => createMessage({ role: 'user', content }, ephemeral ? { ephemeral: true } : {})

describe('applyRewind / applyCompact / applyRevision (pure)', () => {
  it('applyRewind cuts the list at its first retracted message (scaffolding and unflushed messages after it go) and leaves the input alone', () => {
    // given
    const [a, n1, b, n2, c, fresh] = [msg('a'), msg('nudge', true), msg('b'), msg('(empty)', true), msg('c'), msg('not flushed')]
    const live = [a, n1, b, n2, c, fresh]

    // when
    const after = applyRewind(live, { retracted: [b.id, c.id] })
    const none = applyRewind(live, { retracted: [] })

    // then
    expect(after).toEqual([a, n1])
    expect(none).toEqual(live)
    expect(none).not.toBe(live)
    expect(live).toHaveLength(6)
  })

  it("applyCompact puts the summary in the first covered message's place, keeps scaffolding, and appends it when nothing covered is held", () => {
    // given
    const [a, n, b, c] = [msg('a'), msg('nudge', true), msg('b'), msg('c')]
    const s1 = createMessage({ role: 'system', content: 'summary' })
    const s2 = createMessage({ role: 'system', content: 'summary 2' })

    // when / then
    expect(applyCompact([a, n, b, c], { covered: [c.id, a.id], summary: s1 })).toEqual([s1, n, b])
    expect(applyCompact([a, b], { covered: [b.id], summary: [s1, s2] })).toEqual([a, s1, s2])
    expect(applyCompact([a], { covered: [b.id], summary: s1 })).toEqual([a, s1])
    expect(applyCompact([a, s1, b], { covered: [b.id], summary: s1 })).toEqual([a, s1])
  })

  it('applyRevision replaces every copy of the message and nothing else', () => {
    // given
    const [a, b] = [msg('a'), msg('b')]
    const revised = createMessage({ role: 'user', content: 'b2' }, { id: b.id, createdAt: b.createdAt })

    // when / then
    expect(applyRevision([a, b, { ...b }], { message: revised })).toEqual([a, revised, revised])
    expect(applyRevision([a], { message: revised })).toEqual([a])
  })

  it('refuses garbage with INVALID_INPUT', () => {
    const garbage: unknown[] = [null, undefined, 1, 'x', {}, [null], [{}]]
    for (const g of garbage) {
      for (const call of [
        () => applyRewind(g as never, { retracted: [] }),
        () => applyCompact(g as never, { covered: [], summary: [] }),
        () => applyRevision(g as never, { message: msg('x') }),
      ]) {
        let caught: unknown
        try {
          call()
        } catch (error) {
          caught = error
        }
        if (g !== undefined || caught !== undefined) expect(isTurnlogError(caught, 'INVALID_INPUT')).toBe(true)
      }
    }
  })

  it('refuses a sparse array of ids (a hole is not a message id)', () => {
    const live = [msg('a'), msg('b')]
    const holes: unknown[][] = [new Array<unknown>(1), Object.assign(new Array<unknown>(2), { 1: live[0]?.id })]
    for (const ids of holes) {
      expect(() => applyRewind(live, { retracted: ids as string[] })).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
      expect(() => applyCompact(live, { covered: ids as string[], summary: [] })).toThrow(
        expect.objectContaining({ code: 'INVALID_INPUT' }),
      )
    }
  })
})
