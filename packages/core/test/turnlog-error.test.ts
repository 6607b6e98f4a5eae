import { describe, expect, it } from '@jest/globals'
import { ERROR_CODES, TurnlogError, isTurnlogError, type ErrorCode } from '@turnlog/core'

describe('TurnlogError', () => {
  it('keeps code, message, details and cause', () => {
    // given
    const cause = Object.assign(new Error('duplicate key value violates unique constraint'), { code: '23505' })

    // when
    const e = new TurnlogError('MESSAGE_CONFLICT', 'message m1 is stored with other content', {
      details: { messageId: 'm1', storedHash: 'a', incomingHash: 'b' },
      cause,
    })

    // then
    expect(e).toBeInstanceOf(Error)
    expect(e.name).toBe('TurnlogError')
    expect(e.code).toBe('MESSAGE_CONFLICT')
    expect(e.message).toBe('message m1 is stored with other content')
    expect(e.details).toEqual({ messageId: 'm1', storedHash: 'a', incomingHash: 'b' })
    expect(e.cause).toBe(cause)
    expect(e.stack).toContain('TurnlogError')
  })

  it('defaults details to {} and has no cause unless given', () => {
    // when
    const e = new TurnlogError('STORE_CLOSED', 'closed')

    // then
    expect(e.details).toEqual({})
    expect('cause' in e).toBe(false)
  })

  it('has a JSON form for logs with code and details', () => {
    // given
    const e = new TurnlogError('VERSION_CONFLICT', 'expected 3', { details: { actualVersion: 4 } })

    // when
    const json = JSON.parse(JSON.stringify(e)) as unknown

    // then
    expect(json).toEqual({ name: 'TurnlogError', code: 'VERSION_CONFLICT', message: 'expected 3', details: { actualVersion: 4 } })
  })
})

describe('isTurnlogError', () => {
  it('guards by code', () => {
    // given
    const e: unknown = new TurnlogError('SESSION_NOT_FOUND', 'no such session')

    // when / then
    expect(isTurnlogError(e)).toBe(true)
    expect(isTurnlogError(e, 'SESSION_NOT_FOUND')).toBe(true)
    expect(isTurnlogError(e, 'MESSAGE_CONFLICT')).toBe(false)
    if (isTurnlogError(e, 'SESSION_NOT_FOUND')) {
      const code: 'SESSION_NOT_FOUND' = e.code
      expect(code).toBe('SESSION_NOT_FOUND')
    }
  })

  it('recognises an error from another copy of the package by its shape, not instanceof', () => {
    // given: what a duplicated @turnlog/core in node_modules would throw
    class OtherCopyError extends Error {
      readonly code = 'DB_TRANSIENT'
      override readonly name = 'TurnlogError'
    }

    // when / then
    expect(isTurnlogError(new OtherCopyError('x'), 'DB_TRANSIENT')).toBe(true)
  })

  it.each<[string, unknown]>([
    ['a plain Error', new Error('x')],
    ['a driver error with a SQLSTATE code', Object.assign(new Error('x'), { code: '23505' })],
    ['null', null],
    ['undefined', undefined],
    ['a string', 'TurnlogError'],
    ['a look-alike without a code', { name: 'TurnlogError' }],
    ['a look-alike with a numeric code', { name: 'TurnlogError', code: 1 }],
  ])('is false for %s', (_what, value) => {
    expect(isTurnlogError(value)).toBe(false)
  })
})

describe('ERROR_CODES', () => {
  it('lists stable SCREAMING_SNAKE codes, each with a description', () => {
    // given
    const codes = Object.keys(ERROR_CODES) as ErrorCode[]

    // then
    for (const code of codes) {
      expect(code).toMatch(/^[A-Z][A-Z0-9]*(_[A-Z0-9]+)*$/)
      expect(ERROR_CODES[code].length).toBeGreaterThan(10)
    }
    expect(codes).toEqual(
      expect.arrayContaining([
        'MESSAGE_CONFLICT',
        'VERSION_CONFLICT',
        'SESSION_NOT_FOUND',
        'INVALID_MESSAGE',
        'UNKNOWN_MESSAGE',
        'STORE_CLOSED',
        'DB_TRANSIENT',
      ]),
    )
  })
})
