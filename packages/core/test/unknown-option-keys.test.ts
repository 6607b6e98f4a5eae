/**
 * docs/errors.md (`INVALID_INPUT`): a key that is not an option of the call is refused, naming it in
 * `details.field`, with `did you mean …?` when an option is within edit distance 2. Before, core's
 * option schemas stripped unknown keys: `createMessage(p, { externalID: 'slack:1', scope: null })` minted
 * a random id where a stable one was asked for (a redelivery stored twice), and
 * `toWire(list, { repairPairng: true })` sent an unrepaired list the provider refuses.
 */
import { describe, expect, it } from '@jest/globals'
import { refusal } from '@turnlog/testing'
import { createMessage, foldSession, isTurnlogError, toFrozenJson, toWire } from '@turnlog/core'
import { checkKnownKeys, checkOptions } from '@turnlog/core/internal'

const hi = { role: 'user', content: 'hi' } as const

describe('a key that is not an option is INVALID_INPUT naming it', () => {
  it.each<[string, () => unknown, string, string | undefined]>([
    ['createMessage', () => createMessage(hi, { externalID: 'slack:1', scope: null } as never), 'options.externalID', 'externalId'],
    ['createMessage (not an option at all)', () => createMessage(hi, { metadata: { a: 1 } } as never), 'options.metadata', undefined],
    ['toWire', () => toWire([createMessage(hi)], { repairPairng: true } as never), 'options.repairPairng', 'repairPairing'],
    ['foldSession', () => foldSession([], { at: 1, to: 2 } as never), 'options.to', undefined],
    ['toFrozenJson', () => toFrozenJson({ a: 1 }, { maxDepth: 3, maxDeph: 3 } as never), 'limits.maxDeph', 'maxDepth'],
    [
      'checkOptions (given the options)',
      () => checkOptions({ onProgres: () => {} }, 'importThing options', ['onProgress']),
      'options.onProgres',
      'onProgress',
    ],
  ])('%s', async (_, call, field, suggestion) => {
    expect(await refusal(call)).toEqual({ code: 'INVALID_INPUT', field, suggestion })
  })

  it('says "did you mean …?" in the message, and lists the options when none is near', () => {
    expect(() => checkKnownKeys({ grupCommit: false }, ['groupCommit', 'migrate'], 'config', 'openStore')).toThrow(
      'openStore: config.grupCommit is not an option (did you mean groupCommit?)',
    )
    expect(() => checkKnownKeys({ zzz: 1 }, ['groupCommit', 'migrate'], 'config', 'openStore')).toThrow(
      'openStore: config.zzz is not an option (options: groupCommit, migrate)',
    )
  })

  it('suggests across a swap of two letters, a case slip, and up to two edits; never a key with nothing in common', () => {
    const suggestion = (key: string, known: string[]): unknown => {
      try {
        checkKnownKeys({ [key]: 1 }, known, 'options')
        return 'accepted'
      } catch (error) {
        return isTurnlogError(error) ? error.details['suggestion'] : String(error)
      }
    }
    expect(suggestion('expectedVerison', ['expectedVersion'])).toBe('expectedVersion')
    expect(suggestion('ExpectedVersion', ['expectedVersion'])).toBe('expectedVersion')
    expect(suggestion('expectVersion', ['expectedVersion'])).toBe('expectedVersion')
    expect(suggestion('expVersion', ['expectedVersion'])).toBeUndefined()
    expect(suggestion('to', ['at'])).toBeUndefined()
    expect(suggestion('att', ['at', 'id'])).toBe('at')
  })

  it('documented choice: a key whose value is undefined is absent; symbol and non-enumerable keys are not looked at', async () => {
    const options = { [Symbol('tag')]: 1, externalID: undefined, status: undefined }
    Object.defineProperty(options, 'hidden', { value: 1, enumerable: false })
    expect(await refusal(() => createMessage(hi, options as never))).toBeUndefined()
  })

  it('a hostile options object is INVALID_INPUT, never a raw error', async () => {
    const revoked = Proxy.revocable({}, {})
    revoked.revoke()
    expect(await refusal(() => checkKnownKeys(revoked.proxy, ['a'], 'options'))).toMatchObject({ code: 'INVALID_INPUT', field: 'options' })
    expect(await refusal(() => checkKnownKeys(null as never, ['a'], 'options'))).toMatchObject({ code: 'INVALID_INPUT' })
  })
})
