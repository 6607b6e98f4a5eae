/**
 * docs/errors.md (`INVALID_INPUT`, `INVALID_MESSAGE`): `details.field` names the argument or option at
 * fault wherever one does. Before, a message copy with a malformed field (`toMessage`, `parseMessage`,
 * every store call that takes messages), a text that is not JSON, and a value nested too deep for
 * `canonicalJson` or `checkJsonDepth` were refused without naming what was at fault.
 */
import { describe, expect, it } from '@jest/globals'
import {
  canonicalJson,
  checkJsonDepth,
  contentHash,
  createMessage,
  foldSession,
  isTurnlogError,
  jsonDepth,
  liveMessages,
  parseChatMessage,
  parseFormatPayload,
  parseMessage,
  restoreMessage,
  serializeMessage,
  toMessage,
  toolCallIds,
  toolPairing,
  toolResultId,
  transcriptOf,
  type SessionState,
  type StoredEvent,
} from '@turnlog/core'

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

/** A value every read of which throws (a revoked Proxy). */
function unreadable(): never {
  const { proxy, revoke } = Proxy.revocable({}, {})
  revoke()
  return proxy as never
}

describe('an argument that cannot be read is INVALID_INPUT naming that argument, never the function', () => {
  it.each<[string, () => unknown, string]>([
    ['toMessage', () => toMessage(unreadable()), 'message'],
    ['serializeMessage', () => serializeMessage(unreadable()), 'message'],
    ['contentHash', () => contentHash(unreadable()), 'value'],
    ['canonicalJson', () => canonicalJson(unreadable()), 'value'],
    ['jsonDepth', () => jsonDepth(unreadable()), 'value'],
    ['parseChatMessage', () => parseChatMessage(unreadable()), 'payload'],
    ['parseFormatPayload', () => parseFormatPayload(unreadable(), 'openai-chat'), 'payload'],
    ['restoreMessage', () => restoreMessage(unreadable()), 'parts'],
    ['toolCallIds', () => toolCallIds(unreadable()), 'payload'],
    ['toolResultId', () => toolResultId(unreadable()), 'payload'],
    ['toolPairing', () => toolPairing([unreadable()]), 'messages'],
    [
      'foldSession',
      () =>
        foldSession({
          [Symbol.iterator]: (): Iterator<StoredEvent> => {
            throw new Error('the log reader failed')
          },
        }),
      'events',
    ],
    ['liveMessages', () => liveMessages(unreadable() as SessionState), 'state'],
    ['transcriptOf', () => transcriptOf(unreadable() as SessionState), 'state'],
  ])('%s', (_name, call, field) => {
    // when / then
    expect(refusal(call)).toEqual({ code: 'INVALID_INPUT', field })
  })
})
