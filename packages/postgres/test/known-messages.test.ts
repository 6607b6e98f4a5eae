/**
 * The flush cache's kept lists (`KnownMessages.keepFlushed` / `durablePrefix`): a list is kept only
 * for a session the cache holds, within a budget of slots over all sessions (least recently kept
 * dropped first), dropped with its session, and its count of durable messages is made against the
 * session's current entry: a session forgotten and learnt again is counted anew.
 */
import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, parseSessionId, type Message, type SessionId } from '@turnlog/core'
import { KnownMessages } from '@turnlog/postgres/internal'
import { FlushedList } from '../src/store/flushed-list.js'

const sid = (n: number): SessionId => parseSessionId(`01900000-0000-7000-8000-${String(n).padStart(12, '0')}`)
const user = (content: string): Message => createMessage({ role: 'user', content })
const pair = (m: Message): readonly [string, string] => [m.id, contentHash(m)]
/** A flushed list of `slots` slots (one message listed again and again: the check is cheap). */
const listOf = (slots: number): FlushedList =>
  FlushedList.check(
    undefined,
    Array.from({ length: slots }, () => shared),
  ).list
const shared = user('listed many times')

describe('KnownMessages: the lists flushes keep', () => {
  it('keeps a list only for a session it holds, and counts its durable prefix against that session', () => {
    // given
    const known = new KnownMessages(10)
    const [a, b, c] = [user('a'), user('b'), user('c')]
    const list = FlushedList.check(undefined, [a, b, c]).list

    // when: kept before the session is known, then after
    known.keepFlushed(sid(1), list)
    const before = known.flushedList(sid(1))
    known.addAll(sid(1), [pair(a), pair(b)])
    known.keepFlushed(sid(1), list)

    // then
    expect(before).toBeUndefined()
    expect(known.flushedList(sid(1))).toBe(list)
    expect(known.durablePrefix(sid(1), list, 3)).toBe(2)
    expect(known.durablePrefix(sid(1), list, 1)).toBe(1)
    expect(known.durablePrefix(sid(2), list, 3)).toBe(0)
    known.add(sid(1), c.id, contentHash(c))
    expect(known.durablePrefix(sid(1), list, 3)).toBe(3)
  })

  it('drops the list with its session, and counts anew for a session forgotten and learnt again', () => {
    // given: a cache of one session, whose list is counted durable in full
    const known = new KnownMessages(1)
    const [a, b] = [user('a'), user('b')]
    known.addAll(sid(1), [pair(a), pair(b)])
    const list = FlushedList.check(undefined, [a, b]).list
    known.keepFlushed(sid(1), list)
    expect(known.durablePrefix(sid(1), list, 2)).toBe(2)

    // when: another session pushes it out, then it is learnt again with one message only
    known.addAll(sid(2), [pair(user('other'))])
    const afterEviction = known.flushedList(sid(1))
    known.addAll(sid(1), [pair(a)])
    known.keepFlushed(sid(1), list) // a flush that was in flight keeps its list again

    // then: the count is the new entry's, not the one made before
    expect(afterEviction).toBeUndefined()
    expect(known.durablePrefix(sid(1), list, 2)).toBe(1)
  })

  it('frees the slots of a list dropped with its session', () => {
    // given: a cache of one session holding a list of 60,000 slots
    const known = new KnownMessages(1)
    known.add(sid(1), shared.id, contentHash(shared))
    known.keepFlushed(sid(1), listOf(60_000))

    // when: another session pushes it out and keeps a list as long
    known.add(sid(2), shared.id, contentHash(shared))
    const second = listOf(60_000)
    known.keepFlushed(sid(2), second)

    // then: within the budget (100,000 slots) once the first is gone
    expect(known.flushedList(sid(2))).toBe(second)
  })

  it('keeps at most 100,000 slots over all sessions, the least recently kept dropped first', () => {
    // given
    const known = new KnownMessages(10)
    for (const n of [1, 2, 3]) known.add(sid(n), shared.id, contentHash(shared))
    const [first, second, third] = [listOf(40_000), listOf(40_000), listOf(40_000)]

    // when
    known.keepFlushed(sid(1), first)
    known.keepFlushed(sid(2), second)
    known.keepFlushed(sid(1), first) // kept again: now the most recent
    known.keepFlushed(sid(3), third)

    // then
    expect([known.flushedList(sid(1)), known.flushedList(sid(2)), known.flushedList(sid(3))]).toEqual([first, undefined, third])
    known.keepFlushed(sid(2), listOf(100_001))
    expect(known.flushedList(sid(2))).toBeUndefined()
    expect([known.flushedList(sid(1)), known.flushedList(sid(3))]).toEqual([first, third])
  })
})
