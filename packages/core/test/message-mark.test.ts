/**
 * A message's brand (`isMessage`), its payload's deep-frozen mark and the memoised content hash live on
 * the values themselves (private fields), not in weak collections (issue 19: a weak entry per loaded
 * message slowed every young-generation scavenge). These tests pin what that must not change: a copy is
 * never a message and never carries a hash, nothing of the mark shows in keys, JSON, wire output or
 * serialisation, and frozen values stay frozen when a hash is recorded on them later.
 */
import { describe, expect, it } from '@jest/globals'
import {
  canonicalJson,
  contentHash,
  createMessage,
  isMessage,
  primeContentHash,
  restoreMessage,
  serializeMessage,
  sha256Hex,
  toFrozenJson,
  toMessage,
  toWire,
  withStatus,
  type Message,
  type MessageId,
} from '@turnlog/core'

const ID = '0190f5a2-3b4c-7d8e-9f01-23456789abcd' as MessageId
const FAKE = 'f'.repeat(64)

function created(): Message {
  return createMessage({ role: 'user', content: [{ type: 'text', text: 'marked' }] }, { meta: { model: 'm' } })
}

function restored(): Message {
  // what a store hands restoreMessage: a payload fresh from JSON.parse and its stored hash
  return restoreMessage({
    id: ID,
    payload: JSON.parse('{"role":"user","content":"from a row"}'),
    createdAt: '2026-01-01T00:00:00Z',
    contentHash: FAKE,
  })
}

/** The hash a value's canonical text really has, computed without any memo. */
function trueHash(value: unknown): string {
  return sha256Hex(canonicalJson(value))
}

describe.each([
  ['created', created],
  ['restored', restored],
])('a %s message', (_, make) => {
  it('is a message, and no copy of it is: spread, Object.assign, structuredClone, JSON', () => {
    // given
    const m = make()

    // when
    const copies = [{ ...m }, Object.assign({}, m), JSON.parse(JSON.stringify(m)) as unknown]
    // (structuredClone's objects come from the host's realm under Jest: toMessage refuses them as not plain)
    const cloned: unknown = structuredClone(m)

    // then: each copy is checked and rebuilt as a new message with the same id
    expect(isMessage(m)).toBe(true)
    expect(isMessage(cloned)).toBe(false)
    for (const copy of copies) {
      expect(isMessage(copy)).toBe(false)
      const trusted = toMessage(copy)
      expect(trusted).not.toBe(copy)
      expect(trusted.id).toBe(m.id)
    }
  })

  it('is not a message behind a Proxy, and no trap is asked', () => {
    // given: a Proxy whose every trap throws
    const m = make()
    const trap = (): never => {
      throw new Error('trap asked')
    }
    const proxy = new Proxy(m, { get: trap, has: trap, getOwnPropertyDescriptor: trap, ownKeys: trap, getPrototypeOf: trap })

    // when / then
    expect(isMessage(proxy)).toBe(false)
  })

  it('has no key beyond its envelope fields, and neither has its payload', () => {
    // given
    const m = make()
    contentHash(m) // the hash is recorded now, on the payload's mark

    // then: every own key (strings and symbols, enumerable or not) is an enumerable envelope field
    expect(Reflect.ownKeys(m)).toEqual(Object.keys(m))
    expect(
      Object.keys(m).every((k) =>
        ['id', 'payload', 'format', 'meta', 'createdAt', 'ephemeral', 'externalId', 'externalScope', 'status'].includes(k),
      ),
    ).toBe(true)
    expect(Reflect.ownKeys(m.payload)).toEqual(Object.keys(m.payload))
    expect(Object.getOwnPropertySymbols(m.payload)).toEqual([])
  })

  it('writes nothing of the mark into JSON, serializeMessage or toWire', () => {
    // given
    const m = make()
    contentHash(m)

    // when
    const json = JSON.parse(JSON.stringify(m)) as Record<string, unknown>
    const serialized = JSON.parse(serializeMessage(m)) as Record<string, unknown>
    const [wire] = toWire([m])

    // then: exactly the fields and payload keys, nothing else
    expect(Object.keys(json)).toEqual(Object.keys(m))
    expect(Object.keys(serialized)).toEqual(Object.keys(m))
    expect(Reflect.ownKeys(wire as object)).toEqual(Object.keys(m.payload))
    expect(json['payload']).toEqual(m.payload)
  })

  it('stays frozen, deeply, when its hash is recorded after it was frozen', () => {
    // given
    const m = make()

    // when
    const hash = contentHash(m)
    primeContentHash(m.payload, hash)

    // then
    expect(Object.isFrozen(m)).toBe(true)
    expect(Object.isFrozen(m.payload)).toBe(true)
    expect(Object.isExtensible(m.payload)).toBe(false)
    expect(Reflect.ownKeys(m.payload)).toEqual(Object.keys(m.payload))
  })

  it('does not lend its memoised hash to a copy of its payload', () => {
    // given: a payload whose recorded hash is a stand-in (as a store may pass)
    const m = make()
    primeContentHash(m.payload, FAKE)
    expect(contentHash(m)).toBe(FAKE)

    // when: the payload is copied every way a caller might
    const copies = [
      { ...m.payload },
      structuredClone(m.payload),
      JSON.parse(JSON.stringify(m.payload)) as object,
      toFrozenJson(m.payload) as object,
    ]

    // then: each copy is hashed from its content, not from the original's mark
    for (const copy of copies) expect(contentHash(copy as never)).toBe(trueHash(m.payload))
  })

  it('keeps its payload (and so its hash) through withStatus, which makes a new message', () => {
    // given
    const m = make()
    const hash = contentHash(m)

    // when
    const partial = withStatus(m, 'partial')

    // then
    expect(isMessage(partial)).toBe(true)
    expect(partial).not.toBe(m)
    expect(partial.payload).toBe(m.payload)
    expect(contentHash(partial)).toBe(hash)
  })
})

describe('the content hash kept on the mark', () => {
  it('is the canonical hash for a created message, through the message and through its payload', () => {
    // given
    const m = created()

    // when
    const first = contentHash(m)

    // then
    expect(first).toBe(trueHash(m.payload))
    expect(contentHash(m.payload as never)).toBe(first)
  })

  it('is the stored hash for a restored payload; without one, it is computed and then kept', () => {
    // given
    const withHash = restored()
    const without = restoreMessage({
      id: ID,
      payload: JSON.parse('{"role":"user","content":"from a row"}'),
      createdAt: '2026-01-01T00:00:00Z',
    })

    // then
    expect(contentHash(withHash)).toBe(FAKE)
    expect(contentHash(without)).toBe(trueHash(without.payload))
  })

  it('is still memoised for a caller-frozen payload core did not mark (primeContentHash)', () => {
    // given: a payload frozen all the way down by the caller, not by core
    const payload = Object.freeze({ role: 'user', content: Object.freeze([Object.freeze({ type: 'text', text: 'mine' })]) })

    // when
    primeContentHash(payload, FAKE)

    // then: the primed hash is used; a mutable look-alike is not memoised
    expect(contentHash(payload as never)).toBe(FAKE)
    expect(contentHash({ role: 'user', content: [{ type: 'text', text: 'mine' }] } as never)).toBe(trueHash(payload))
  })

  it('is not memoised for a payload whose restore failed half-way through freezing it', () => {
    // given: a payload holding a Proxy that refuses to be frozen, so restoreMessage throws after the
    // payload's top level was frozen (and marked) but before the Proxy was
    const inner = { type: 'text', text: 'before' }
    const refusing = new Proxy(inner, {
      preventExtensions: () => {
        throw new Error('not freezable')
      },
    })
    const payload = { role: 'user', content: [refusing] }
    expect(() => restoreMessage({ id: ID, payload, createdAt: '2026-01-01T00:00:00Z', contentHash: FAKE })).toThrow()

    // when: the caller hashes it, changes the part that stayed mutable, and hashes it again
    const first = contentHash(payload as never)
    inner.text = 'after'
    const second = contentHash(payload as never)

    // then: neither the given hash nor the first result was kept for it
    expect(first).toBe(trueHash({ role: 'user', content: [{ type: 'text', text: 'before' }] }))
    expect(second).toBe(trueHash({ role: 'user', content: [{ type: 'text', text: 'after' }] }))
  })

  it('is kept for a restored payload that arrived frozen already (it cannot be marked)', () => {
    // given: a store handing in a payload whose top level is frozen
    const payload = Object.freeze({ role: 'user', content: [{ type: 'text', text: 'prefrozen' }] })

    // when
    const m = restoreMessage({ id: ID, payload, createdAt: '2026-01-01T00:00:00Z', contentHash: FAKE })

    // then
    expect(contentHash(m)).toBe(FAKE)
    expect(Object.isFrozen((m.payload.content as readonly object[])[0])).toBe(true)
  })
})
