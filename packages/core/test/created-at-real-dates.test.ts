/**
 * Regression (adversarial review): a `createdAt` string was checked by its shape and `Date.parse`
 * alone, which is lenient: `2024-02-30T…` passed and was read back as March 1, `2023-02-29` as March 1,
 * `T24:00:00` as the next day. Every place core reads a timestamp string (createMessage's
 * `createdAt` option, a message copy's `createdAt` in `toMessage` / `parseMessage`) now refuses a date
 * or time that does not exist, with INVALID_MESSAGE naming the field.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, newMessageId, parseMessage, toMessage } from '@turnlog/core'
import { isIsoTimestamp } from '@turnlog/core/internal'

const NOT_REAL = [
  '2024-02-30T00:00:00Z',
  '2023-02-29T00:00:00Z',
  '2024-04-31T12:00:00Z',
  '2100-02-29T00:00:00Z',
  '2024-13-01T00:00:00Z',
  '2024-00-10T00:00:00Z',
  '2024-01-00T00:00:00Z',
  '2024-01-01T24:00:00Z',
  '2024-01-01T23:60:00Z',
  '2024-01-01T23:59:60Z',
  '2024-01-01T00:00:00+24:00',
  '2024-01-01T00:00:00+01:60',
]
const REAL = [
  '2024-02-29T00:00:00Z',
  '2000-02-29T23:59:59.999999999+14:00',
  '0000-02-29T00:00:00Z',
  '9999-12-31T23:59:59-23:59',
  '2024-04-30T12:00:00.5+05:30',
]

function caught(fn: () => unknown): { code?: string; details?: { field?: string } } {
  try {
    fn()
  } catch (e) {
    return e as { code?: string; details?: { field?: string } }
  }
  throw new Error('expected a throw')
}

describe('createdAt: a real date and time, or refused', () => {
  it.each(NOT_REAL)('createMessage refuses createdAt %s with INVALID_MESSAGE naming options.createdAt', (at) => {
    // when
    const error = caught(() => createMessage({ role: 'user', content: 'hi' }, { createdAt: at }))

    // then
    expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
    expect(error.details?.field).toBe('options.createdAt')
  })

  it.each(NOT_REAL)('toMessage and parseMessage refuse a copy whose createdAt is %s, naming createdAt', (at) => {
    // given
    const copy = { id: newMessageId(), payload: { role: 'user', content: 'hi' }, createdAt: at }

    // when
    const errors = [caught(() => toMessage(copy)), caught(() => parseMessage(JSON.stringify(copy)))]

    // then
    for (const error of errors) {
      expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
      expect(error.details?.field).toBe('createdAt')
    }
  })

  it.each(REAL)('keeps %s as given', (at) => {
    expect(createMessage({ role: 'user', content: 'hi' }, { createdAt: at }).createdAt).toBe(at)
    expect(isIsoTimestamp(at)).toBe(true)
  })

  it('names the option for a Date it cannot store either', () => {
    const error = caught(() => createMessage({ role: 'user', content: 'hi' }, { createdAt: new Date(NaN) }))
    expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
    expect(error.details?.field).toBe('options.createdAt')
  })

  it('isIsoTimestamp agrees with a round trip through Date for every day of a leap and a common year', () => {
    // given: every calendar day 1..31 of every month of 2023 and 2024
    for (const year of [2023, 2024]) {
      for (let month = 1; month <= 12; month++) {
        for (let day = 1; day <= 31; day++) {
          const text = `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}T00:00:00.000Z`
          // then: a real day reads back as itself; any other is refused
          const real = new Date(Date.UTC(year, month - 1, day)).toISOString() === text
          expect([text, isIsoTimestamp(text)]).toEqual([text, real])
        }
      }
    }
  })
})
