import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, type Message } from '@turnlog/core'
import { CursorPersister, scoreRows } from '../src/demo/cursor-persister.js'

const user = (content: string): Message => createMessage({ role: 'user', content })

describe('CursorPersister (the naive persister the demo contrasts)', () => {
  it('loses the next reply after the list shrank (#46053: messages[lastFlushed:] came back empty)', () => {
    // given: three messages flushed, then a rewind drops two and one new reply arrives
    const [a, b, c, reply] = [user('a'), user('b'), user('c'), user('reply')] as [Message, Message, Message, Message]
    const persister = new CursorPersister()
    persister.flush([a, b, c])
    // when
    const written = persister.flush([a, reply])
    // then
    expect(written).toBe(0)
    const expected = new Map([a, b, c, reply].map((m) => [m.id, contentHash(m)]))
    expect(scoreRows(persister.rows, expected)).toMatchObject({ lost: 1, lostIds: [reply.id], duplicated: 0 })
  })

  it('writes a redelivered message twice and keeps a revised message stale', () => {
    // given
    const q = user('question')
    const t = createMessage({ role: 'tool', tool_call_id: 'c1', content: 'out' })
    const persister = new CursorPersister()
    persister.flush([q, t])
    const revised = createMessage({ role: 'tool', tool_call_id: 'c1', content: 'out + note' }, { id: t.id, createdAt: t.createdAt })
    // when
    persister.flush([q, revised, q])
    // then
    const score = scoreRows(
      persister.rows,
      new Map([
        [q.id, contentHash(q)],
        [t.id, contentHash(revised)],
      ]),
    )
    expect(score).toMatchObject({ duplicated: 1, duplicatedIds: [q.id], stale: 1, staleIds: [t.id], lost: 0 })
  })
})
