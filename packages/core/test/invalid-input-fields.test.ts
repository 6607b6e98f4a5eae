/**
 * docs/errors.md (`INVALID_INPUT`, `INVALID_MESSAGE`): `details.field` names the argument or option at
 * fault wherever one does. Before, a message copy with a malformed field (`toMessage`, `parseMessage`,
 * every store call that takes messages), a text that is not JSON, and a value nested too deep for
 * `canonicalJson` or `checkJsonDepth` were refused without naming what was at fault.
 */
import { describe, expect, it } from '@jest/globals'
import { canonicalJson, checkJsonDepth, createMessage, isTurnlogError, parseMessage, toMessage } from '@turnlog/core'

/** Code and `details.field` of what `call` threw (`'returned'` when it did not). */
function refusal(call: () => unknown): unknown {
  try {
    call()
    return 'returned'
  } catch (error) {
    return isTurnlogError(error) ? { code: error.code, field: error.details['field'] } : String(error)
  }
}

/** An array nested `levels` deep. */
function nested(levels: number): unknown {
  let value: unknown = 1
  for (let i = 0; i < levels; i++) value = [value]
  return value
}

const copy = { ...createMessage({ role: 'user', content: 'hi' }) } as Record<string, unknown>

describe('a malformed argument is refused naming it in details.field', () => {
  it.each<[string, () => unknown, string, string]>([
    ['toMessage(not an object)', () => toMessage(5), 'INVALID_MESSAGE', 'message'],
    ['toMessage(no id)', () => toMessage({ ...copy, id: undefined }), 'INVALID_MESSAGE', 'id'],
    ['toMessage(id not a UUID)', () => toMessage({ ...copy, id: 'nope' }), 'INVALID_INPUT', 'id'],
    ['toMessage(externalId not a string)', () => toMessage({ ...copy, externalId: 5 }), 'INVALID_MESSAGE', 'externalId'],
    ['toMessage(externalScope not a string)', () => toMessage({ ...copy, externalScope: 5 }), 'INVALID_MESSAGE', 'externalScope'],
    ['toMessage(status)', () => toMessage({ ...copy, status: 'final' }), 'INVALID_MESSAGE', 'status'],
    ['toMessage(ephemeral)', () => toMessage({ ...copy, ephemeral: 'yes' }), 'INVALID_MESSAGE', 'ephemeral'],
    ['parseMessage(not JSON)', () => parseMessage('{'), 'INVALID_MESSAGE', 'text'],
    ['canonicalJson(too deep)', () => canonicalJson(nested(100)), 'INVALID_INPUT', 'value'],
    ['checkJsonDepth(too deep)', () => checkJsonDepth(nested(100), 'metadata'), 'INVALID_INPUT', 'metadata'],
  ])('%s', (_name, call, code, field) => {
    // when / then
    expect(refusal(call)).toEqual({ code, field })
  })

  it('keeps the details other readers use (checkJsonDepth: what and limit)', () => {
    // when
    let error: unknown
    try {
      checkJsonDepth(nested(100), 'metadata')
    } catch (e) {
      error = e
    }

    // then
    expect(isTurnlogError(error) && error.details).toMatchObject({ what: 'metadata', field: 'metadata', limit: 64 })
  })
})
