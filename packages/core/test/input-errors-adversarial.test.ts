/**
 * Attacks the input errors of core (`createMessage`'s options first):
 * - docs/errors.md's promise for `INVALID_INPUT`, "`details.field` names the argument or option at
 *   fault wherever one does": an `options.id` that is not a UUID (or not a string) and an empty
 *   `options.externalId` used to carry no `details.field`, or a bare `externalId` that is no option of
 *   `createMessage`. Every bad option must name itself.
 * - `createdAt`: a `Date` outside the years 0000-9999 used to be accepted, written as `+010000-…`, a text
 *   the same function refuses as a string, so the message could not be spread-copied, `parseMessage`d
 *   or `toWire`d as a copy (packages/core/README.md: `serializeMessage` / `parseMessage` round-trip a
 *   message exactly).
 * - `checkOptions` (internal: the options check of `audit`, `importEvents`, `importSessions`,
 *   `importHermes`) refused a bad options object or `onProgress` with no `details.field`; so did
 *   `sessionIdFromExternal` an empty key and `placeholderDigest` a value that is not an object.
 */
import { describe, expect, it } from '@jest/globals'
import {
  createMessage,
  isTurnlogError,
  parseMessage,
  placeholderDigest,
  serializeMessage,
  sessionIdFromExternal,
  toMessage,
  toWire,
  type CreateMessageOptions,
  type TurnlogError,
} from '@turnlog/core'
import { checkOptions } from '@turnlog/core/internal'

/** The TurnlogError `fn` throws (fails the test when it returns or throws anything else). */
function caught(fn: () => unknown): TurnlogError {
  try {
    fn()
  } catch (e) {
    if (isTurnlogError(e)) return e
    throw e
  }
  throw new Error('expected a TurnlogError, but the call returned')
}

const payload = { role: 'user', content: 'hi' } as const

describe('createMessage: each bad option is INVALID_INPUT naming itself in details.field', () => {
  it.each<[string, CreateMessageOptions, string]>([
    ['an id that is not a UUID', { id: 'msg-1' }, 'options.id'],
    ['an id that is not a string', { id: 42 as never }, 'options.id'],
    ['an id that is a UUID with a stray character', { id: '0190f5a2-3b4c-7d8e-9f01-23456789abcdx' }, 'options.id'],
    ['an empty externalId', { externalId: '', scope: 'telegram:42' }, 'options.externalId'],
    ['an empty externalId with scope null', { externalId: '', scope: null }, 'options.externalId'],
    ['an externalId without a scope', { externalId: '9001' }, 'options.scope'],
    ['an empty scope', { externalId: '9001', scope: '' }, 'options.scope'],
    ['a status other than partial', { status: 'final' as never }, 'options.status'],
    ['ephemeral that is not a boolean', { ephemeral: 'yes' as never }, 'options.ephemeral'],
  ])('%s', (_, options, field) => {
    // when
    const e = caught(() => createMessage(payload, options))

    // then
    expect(e.code).toBe('INVALID_INPUT')
    expect(e.details['field']).toBe(field)
  })

  it('keeps what the id parser said (what, value) next to the field', () => {
    // when
    const e = caught(() => createMessage(payload, { id: 'msg-1' }))

    // then
    expect(e.details).toMatchObject({ field: 'options.id', what: 'message id', value: 'msg-1' })
    expect(e.message).toContain('options.id')
  })
})

describe('createMessage: createdAt', () => {
  it('refuses a Date outside the years 0000-9999: its ISO text (+010000-…) is one the string form refuses, so the message could not be copied or parsed again', () => {
    for (const date of [new Date(8.64e15), new Date(-8.64e15), new Date(Date.UTC(10000, 0, 1)), new Date(Date.UTC(-1, 0, 1))]) {
      // when
      const e = caught(() => createMessage(payload, { createdAt: date }))

      // then
      expect(e.code).toBe('INVALID_MESSAGE')
      expect(caught(() => createMessage(payload, { createdAt: date.toISOString() })).code).toBe('INVALID_MESSAGE')
    }
  })

  it('keeps every Date it accepts through a copy, a serialize/parse round trip and toWire of the copy', () => {
    for (const date of [new Date(Date.UTC(0, 0, 1)), new Date(Date.UTC(9999, 11, 31, 23, 59, 59, 999)), new Date(0)]) {
      // given
      const m = createMessage(payload, { createdAt: date })

      // when
      const back = parseMessage(serializeMessage(m))

      // then
      expect(back.createdAt).toBe(date.toISOString())
      expect(toMessage({ ...m }).createdAt).toBe(m.createdAt)
      expect(toWire([{ ...m }])).toEqual([payload])
    }
  })
})

describe('checkOptions (the options of imports and audits): details.field names the option at fault', () => {
  it.each<[string, unknown, string]>([
    ['null', null, 'options'],
    ['an array', [], 'options'],
    ['a string', 'fast', 'options'],
    ['an onProgress that is not a function', { onProgress: 1 }, 'options.onProgress'],
  ])('%s', (_, options, field) => {
    // when
    const e = caught(() => checkOptions(options, 'importThing options'))

    // then
    expect(e.code).toBe('INVALID_INPUT')
    expect(e.details['field']).toBe(field)
    expect(e.message).toContain(field === 'options' ? 'importThing options' : 'onProgress')
  })
})

describe('sessionIdFromExternal: details.field names its argument', () => {
  it.each([[''], [42], [null]])('%p', (key) => {
    // when
    const e = caught(() => sessionIdFromExternal(key as never))

    // then
    expect(e.code).toBe('INVALID_INPUT')
    expect(e.details['field']).toBe('externalKey')
  })
})

describe('placeholderDigest: details.field names its argument', () => {
  it.each([[null], ['text'], [42]])('%p', (placeholder) => {
    // when
    const e = caught(() => placeholderDigest(placeholder))

    // then
    expect(e.code).toBe('INVALID_INPUT')
    expect(e.details['field']).toBe('placeholder')
  })
})
