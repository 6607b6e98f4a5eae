/**
 * Pins docs/formats.md on a message of a format this process has not registered (written by a process
 * that had it): the loaded message itself is sent (`toWire`), hashed and serialized as it is, while
 * rebuilding it from a copy (`toMessage` of a spread or parsed copy, `parseMessage`) is creating it and
 * needs the format: `INVALID_MESSAGE` with `details.format`, never a silent reading as another format.
 */
import { describe, expect, it } from '@jest/globals'
import { contentHash, isTurnlogError, newMessageId, parseMessage, restoreMessage, serializeMessage, toMessage, toWire } from '@turnlog/core'

const FORMAT = 'acme.unregistered-notes'

function loaded() {
  // as a store restores a row it read
  return restoreMessage({ id: newMessageId(), payload: { kind: 'note', text: 'x' }, createdAt: '2026-01-01T00:00:00Z', format: FORMAT })
}

function errorOf(fn: () => unknown): unknown {
  try {
    fn()
  } catch (e) {
    return e
  }
  return undefined
}

describe('a loaded message of an unregistered format', () => {
  it('is sent, hashed and serialized as it is', () => {
    // given
    const m = loaded()

    // when / then
    expect(toWire<object>([m])).toEqual([{ kind: 'note', text: 'x' }])
    expect(contentHash(m)).toBe(contentHash({ payload: { kind: 'note', text: 'x' } }))
    expect(JSON.parse(serializeMessage(m))).toMatchObject({ id: m.id, format: FORMAT })
  })

  it('cannot be rebuilt from a copy: INVALID_MESSAGE naming the format', () => {
    // given
    const m = loaded()

    // when
    const errors = [() => toMessage({ ...m }), () => parseMessage(serializeMessage(m)), () => toWire([{ ...m }])].map(errorOf)

    // then
    for (const e of errors) {
      expect(isTurnlogError(e, 'INVALID_MESSAGE')).toBe(true)
      expect((e as { details: { format?: unknown } }).details.format).toBe(FORMAT)
    }
  })
})
