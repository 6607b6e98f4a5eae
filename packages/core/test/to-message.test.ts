import { describe, expect, it } from '@jest/globals'
import {
  contentHash,
  createMessage,
  isMessage,
  isTurnlogError,
  parseMessage,
  restoreMessage,
  serializeMessage,
  toMessage,
  withStatus,
  type MessageId,
} from '@turnlog/core'
import { codeOf } from './support/error-code.js'

describe('toMessage / isMessage', () => {
  it('passes a message made by createMessage through untouched', () => {
    // given
    const m = createMessage({ role: 'user', content: 'hi' })

    // when / then
    expect(toMessage(m)).toBe(m)
    expect(isMessage(m)).toBe(true)
  })

  it('does not trust a look-alike: a spread copy is not a message until validated', () => {
    // given
    const m = createMessage({ role: 'user', content: 'hi' }, { ephemeral: true, externalId: 'x:1', scope: null })
    const copy = { ...m }

    // when
    const trusted = toMessage(copy)

    // then: same message (same id, same content), a new trusted value
    expect(isMessage(copy)).toBe(false)
    expect(isMessage(trusted)).toBe(true)
    expect(trusted).not.toBe(copy)
    expect(trusted).toEqual(m)
    expect(Object.isFrozen(trusted.payload)).toBe(true)
  })

  it('rebuilds a message from its parsed JSON form, keeping every envelope field', () => {
    // given
    const m = createMessage({ role: 'assistant', content: 'Hel' }, { status: 'partial', createdAt: '2026-01-01T00:00:00.000Z' })

    // when
    const back = toMessage(JSON.parse(JSON.stringify(m)))

    // then
    expect(back).toEqual(m)
    expect(back.status).toBe('partial')
    expect(contentHash(back)).toBe(contentHash(m))
  })

  it.each<[string, unknown, string]>([
    ['null', null, 'INVALID_MESSAGE'],
    ['a string', 'msg', 'INVALID_MESSAGE'],
    ['no id', { payload: { role: 'user', content: 'hi' }, createdAt: '2026-01-01T00:00:00Z' }, 'INVALID_MESSAGE'],
    [
      'an id that is not a UUID',
      { id: '42', payload: { role: 'user', content: 'hi' }, createdAt: '2026-01-01T00:00:00Z' },
      'INVALID_INPUT',
    ],
    [
      'an invalid payload',
      { id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd', payload: { role: 'robot' }, createdAt: '2026-01-01T00:00:00Z' },
      'INVALID_MESSAGE',
    ],
    [
      'a bad status',
      {
        id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd',
        payload: { role: 'user', content: 'hi' },
        createdAt: '2026-01-01T00:00:00Z',
        status: 'done',
      },
      'INVALID_MESSAGE',
    ],
    [
      'a non-boolean ephemeral',
      {
        id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd',
        payload: { role: 'user', content: 'hi' },
        createdAt: '2026-01-01T00:00:00Z',
        ephemeral: 'yes',
      },
      'INVALID_MESSAGE',
    ],
    [
      'a non-string externalId',
      {
        id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd',
        payload: { role: 'user', content: 'hi' },
        createdAt: '2026-01-01T00:00:00Z',
        externalId: 7,
      },
      'INVALID_MESSAGE',
    ],
    [
      'a createdAt that is not ISO-8601',
      { id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd', payload: { role: 'user', content: 'hi' }, createdAt: 1767225600000 },
      'INVALID_MESSAGE',
    ],
  ])('refuses %s with %s', (_what, value, code) => {
    expect(codeOf(() => toMessage(value))).toBe(code)
  })

  it('is false for anything createMessage/toMessage did not make', () => {
    expect(isMessage(null)).toBe(false)
    expect(isMessage('x')).toBe(false)
    expect(
      isMessage({
        id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd',
        payload: { role: 'user', content: 'hi' },
        createdAt: '2026-01-01T00:00:00Z',
      }),
    ).toBe(false)
  })
})

describe('withStatus', () => {
  it('gives a new message with the same id and payload and another status', () => {
    // given
    const partial = createMessage({ role: 'assistant', content: 'Hello' }, { status: 'partial', externalId: 'x:2', scope: null })

    // when
    const final = withStatus(partial, undefined)

    // then
    expect(final).not.toBe(partial)
    expect(final.id).toBe(partial.id)
    expect(final.payload).toBe(partial.payload)
    expect('status' in final).toBe(false)
    expect(final.externalId).toBe('x:2')
    expect(partial.status).toBe('partial')
    expect(isMessage(final)).toBe(true)
  })
})

describe('restoreMessage', () => {
  it('deep-freezes the stored payload, even when its top level was already frozen', () => {
    // given: a payload whose outer object is frozen but whose parts are not
    const payload = Object.freeze({ role: 'user', content: [{ type: 'text', text: 'a' }] })

    // when
    const m = restoreMessage({ id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd' as MessageId, payload, createdAt: '2026-01-01T00:00:00Z' })

    // then
    const part = (m.payload.content as readonly object[])[0]
    expect(Object.isFrozen(m.payload.content)).toBe(true)
    expect(Object.isFrozen(part)).toBe(true)
  })

  it('memoises a given stored content hash (the store passes the one read with the payload)', () => {
    // given a stored payload and its hash, and a second copy restored without one
    const stored = { role: 'user', content: 'stored text' }
    const hash = contentHash(createMessage({ role: 'user', content: 'stored text' }))
    // when
    const withHash = restoreMessage({
      id: '0190f5a2-3b4c-7d8e-9f01-23456789abcd' as MessageId,
      payload: stored,
      createdAt: '2026-01-01T00:00:00Z',
      contentHash: hash,
    })
    const without = restoreMessage({
      id: '0190f5a2-3b4c-7d8e-9f01-23456789abce' as MessageId,
      payload: { role: 'user', content: 'stored text' },
      createdAt: '2026-01-01T00:00:00Z',
    })
    // then the given hash is the message's hash, and equals the computed one
    expect(contentHash(withHash)).toBe(hash)
    expect(contentHash(without)).toBe(hash)
    expect(Object.isFrozen(withHash.payload)).toBe(true)
    // the given hash is trusted, not recomputed: a stand-in shows it is what contentHash returns
    const trusted = restoreMessage({
      id: '0190f5a2-3b4c-7d8e-9f01-23456789abcf' as MessageId,
      payload: { role: 'user', content: 'x' },
      createdAt: '2026-01-01T00:00:00Z',
      contentHash: 'f'.repeat(64),
    })
    expect(contentHash(trusted)).toBe('f'.repeat(64))
  })
})

describe('serializeMessage / parseMessage', () => {
  it('round-trips a message with every envelope field', () => {
    // given
    const m = createMessage(
      { role: 'user', content: 'a\u0000b\ud800😀', zeta: 1, alpha: 2 },
      { externalId: 'discord:1:2', scope: null, ephemeral: true, status: 'partial', createdAt: '2026-05-06T07:08:09.123Z' },
    )

    // when
    const text = serializeMessage(m)
    const back = parseMessage(text)

    // then
    expect(back).toEqual(m)
    expect(Object.keys(back.payload)).toEqual(['role', 'content', 'zeta', 'alpha'])
    expect(serializeMessage(back)).toBe(text)
    expect(text).not.toMatch(/[\ud800-\udfff](?![\udc00-\udfff])/u)
  })

  it('refuses text that is not JSON with INVALID_MESSAGE, keeping the cause', () => {
    // when
    let error: unknown
    try {
      parseMessage('{"id":')
    } catch (e) {
      error = e
    }

    // then
    expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
    expect((error as Error).cause).toBeInstanceOf(SyntaxError)
  })
})
