import { describe, expect, it } from '@jest/globals'
import canonicalize from 'canonicalize'
import { canonicalJson, contentHash, isTurnlogError, createMessage, primeContentHash, sha256Hex, type ChatMessage } from '@turnlog/core'
import { payloadContentHash } from '@turnlog/core/internal'
import { sha256 } from './support/independent-hashes.js'

describe('canonicalJson', () => {
  it('writes RFC 8785 text: keys sorted, no whitespace, ECMAScript numbers', () => {
    // given
    const value = {
      role: 'user',
      content: 'hi',
      b: [1, 2.5, -0, 1e21, 1e-7, 0.1 + 0.2, true, null],
      a: { é: 1, z: 2, A: 3, '10': 4, '9': 5 },
    }

    // when
    const text = canonicalJson(value)

    // then
    expect(text).toBe(
      '{"a":{"10":4,"9":5,"A":3,"z":2,"é":1},"b":[1,2.5,0,1e+21,1e-7,0.30000000000000004,true,null],"content":"hi","role":"user"}',
    )
    expect(text).toBe(canonicalize(value))
  })

  it('sorts keys by UTF-16 code units, not by code points (RFC 8785 §3.2.3)', () => {
    // given: U+1F600 is 0xD83D 0xDE00 in UTF-16, which sorts before U+FFFF; by code point it is after
    const value = { '\uffff': 1, '😀': 2, '\u00e9': 3 }

    // when
    const text = canonicalJson(value)

    // then
    expect(text).toBe('{"é":3,"😀":2,"\uffff":1}')
    expect(text).toBe(canonicalize(value))
  })

  it('escapes strings exactly as JSON.stringify does (controls escaped, U+2028 and non-ASCII raw)', () => {
    // given
    const s = 'q"b\\s/\b\f\n\r\t\u0000\u001f\u007f\u2028é😀'

    // when / then
    expect(canonicalJson(s)).toBe('"q\\"b\\\\s/\\b\\f\\n\\r\\t\\u0000\\u001f\u007f\u2028é😀"')
    expect(canonicalJson(s)).toBe(canonicalize(s))
  })

  it('writes lone surrogates as \\uXXXX escapes where the canonicalize package refuses them', () => {
    // given
    const value = { text: 'cut \ud83d here', low: '\ude00' }

    // when
    const text = canonicalJson(value)

    // then
    expect(text).toBe('{"low":"\\ude00","text":"cut \\ud83d here"}')
    expect(() => canonicalize(value)).toThrow(/Lone surrogate/)
    expect(JSON.parse(text)).toEqual(value)
  })

  it('skips undefined object values and writes undefined array items as null, like JSON.stringify', () => {
    expect(canonicalJson({ b: undefined, a: [undefined, 1] })).toBe('{"a":[null,1]}')
  })

  it('refuses values with no JSON form', () => {
    expect(() => canonicalJson(NaN)).toThrow(/has no JSON form/)
    expect(() => canonicalJson({ a: Infinity })).toThrow(/has no JSON form/)
    expect(() => canonicalJson(() => 1)).toThrow(/has no JSON form/)
    expect(() => canonicalJson(1n)).toThrow(/has no JSON form/)
    // objects that are not plain data: before, a Date and a Map hashed as {} (two dates, one hash)
    expect(() => canonicalJson({ d: new Date(0) })).toThrow(/a Date has no JSON form/)
    expect(() => canonicalJson([new Map([['k', 1]])])).toThrow(/a Map has no JSON form/)
    expect(() => contentHash({ role: 'user', content: 'x', at: new Set() } as never)).toThrow(/a Set has no JSON form/)
    expect(() => canonicalJson(new Uint8Array(2))).toThrow(/has no JSON form/)
    expect(canonicalJson(Object.assign(Object.create(null) as object, { a: 1 }))).toBe('{"a":1}')
    // a TurnlogError with a registry code, not a raw TypeError (issue 13.11)
    let caught: unknown
    try {
      canonicalJson(NaN)
    } catch (error) {
      caught = error
    }
    expect(isTurnlogError(caught, 'INVALID_INPUT')).toBe(true)
  })
})

describe('contentHash', () => {
  it('is hex SHA-256 of the UTF-8 bytes of the canonical JSON (known vector)', () => {
    // given
    const payload: ChatMessage = {
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_01', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
      reasoning_content: 'é😀',
      finish_reason: 'tool_calls',
    }
    const canonical =
      '{"content":"","finish_reason":"tool_calls","reasoning_content":"é😀","role":"assistant",' +
      '"tool_calls":[{"function":{"arguments":"{\\"path\\":\\"README.md\\"}","name":"read_file"},"id":"call_01","type":"function"}]}'

    // when
    const hash = contentHash(payload)

    // then
    expect(canonicalJson(payload)).toBe(canonical)
    expect(hash).toBe(sha256(Buffer.from(canonical, 'utf8')))
    expect(hash).toMatch(/^[0-9a-f]{64}$/)
  })

  it('is the same for a message and for its payload, and ignores the envelope', () => {
    // given
    const a = createMessage({ role: 'user', content: 'hi' })
    const b = createMessage({ role: 'user', content: 'hi' }, { ephemeral: true, externalId: 'x:1', scope: null, status: 'partial' })

    // when / then
    expect(contentHash(a)).toBe(contentHash(a.payload))
    expect(contentHash(b)).toBe(contentHash(a))
    expect(contentHash(a)).toBe(contentHash({ content: 'hi', role: 'user' }))
  })

  it('hashes a payload that has its own "payload" field as the payload itself', () => {
    // given
    const payload = { role: 'tool', tool_call_id: 'c1', content: 'ok', payload: { role: 'user', content: 'inner' } } as ChatMessage

    // when / then
    expect(contentHash(payload)).toBe(sha256(canonicalJson(payload)))
  })

  it('tells apart lone surrogates that a UTF-8 encoder would all turn into U+FFFD', () => {
    // given
    const hashes = ['\ud800', '\ud801', '\udc00', '\ufffd'].map((content) => contentHash({ role: 'user', content }))

    // then
    expect(new Set(hashes).size).toBe(4)
  })

  it('changes when any character of the content changes', () => {
    expect(contentHash({ role: 'user', content: 'hi' })).not.toBe(contentHash({ role: 'user', content: 'hi ' }))
    expect(contentHash({ role: 'user', content: 'hi' })).not.toBe(contentHash({ role: 'system', content: 'hi' }))
    expect(contentHash({ role: 'user', content: 'hi' })).not.toBe(contentHash({ role: 'user', content: 'hi', name: 'a' }))
  })

  it('is not fooled by an in-place edit of a caller payload that is only shallowly frozen (#92881: stale bytes after edit)', () => {
    // given: the top level is frozen, the parts are not
    const part = { type: 'text', text: 'before' }
    const payload = Object.freeze({ role: 'user', content: [part] }) as ChatMessage
    const before = contentHash(payload)

    // when
    part.text = 'after'

    // then
    expect(contentHash(payload)).not.toBe(before)
    expect(contentHash(payload)).toBe(sha256(canonicalJson(payload)))
  })

  it('re-hashes an unfrozen payload on every call', () => {
    // given
    const payload: { role: 'user'; content: string } = { role: 'user', content: 'a' }
    const first = contentHash(payload)

    // when
    payload.content = 'b'

    // then
    expect(contentHash(payload)).not.toBe(first)
  })

  it('uses a primed hash for a frozen payload (stores pass the hash read next to the row)', () => {
    // given
    const m = createMessage({ role: 'user', content: 'primed' })
    const fake = 'f'.repeat(64)

    // when
    primeContentHash(m.payload, fake)

    // then
    expect(contentHash(m)).toBe(fake)
  })
})

describe('sha256Hex', () => {
  it('matches the FIPS 180-2 vector and node:crypto', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad')
    expect(sha256Hex('é😀')).toBe(sha256('é😀'))
  })
})

describe('payloadContentHash (internal: the content hash with a caller-supplied SHA-256)', () => {
  it('hashes exactly the payload it is given with the digest, and shares the memo with contentHash', () => {
    // given: a payload with a top-level `payload` field and no `role` (contentHash of it would pick the inner one)
    const m = createMessage({ payload: { inner: 1 }, note: 'é😀\ud800' }, { format: 'json' })
    let calls = 0
    const digest = (text: string): string => {
      calls++
      return sha256(text)
    }

    // when
    const hash = payloadContentHash(m.payload, digest)

    // then
    expect(hash).toBe(sha256(canonicalJson(m.payload)))
    expect(contentHash(m)).toBe(hash)
    expect(payloadContentHash(m.payload, digest)).toBe(hash)
    expect(calls).toBe(1)
  })

  it('refuses a digest that does not return 64 lower-case hex digits, and memoises nothing then', () => {
    // given
    const m = createMessage({ role: 'user', content: 'digest' })

    // when
    const attempts = [() => 'F'.repeat(64), () => 'f'.repeat(63), () => 1 as unknown as string].map((digest) => {
      try {
        payloadContentHash(m.payload, digest)
        return 'returned'
      } catch (error) {
        return isTurnlogError(error) ? error.code : String(error)
      }
    })

    // then
    expect(attempts).toEqual(['INVALID_INPUT', 'INVALID_INPUT', 'INVALID_INPUT'])
    expect(contentHash(m)).toBe(sha256(canonicalJson(m.payload)))
  })
})
