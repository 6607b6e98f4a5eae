import { describe, expect, it } from '@jest/globals'
import {
  EXTERNAL_ID_NAMESPACE,
  EXTERNAL_SCOPE_NAMESPACE,
  contentHash,
  createMessage,
  isMessage,
  isTurnlogError,
  messageIdFromExternal,
  serializeMessage,
  toMessage,
  toWire,
  type TurnlogError,
} from '@turnlog/core'
import { uuidV5 } from './support/independent-hashes.js'

/** Runs `fn`, which must throw a TurnlogError; returns it. */
function caught(fn: () => unknown): TurnlogError {
  try {
    fn()
  } catch (e) {
    if (isTurnlogError(e)) return e
    throw new Error(`expected a TurnlogError, got ${String(e)}`, { cause: e })
  }
  throw new Error('expected a TurnlogError, nothing was thrown')
}

function issuesOf(e: TurnlogError): { code: string; path: readonly (string | number)[]; message: string }[] {
  const issues = e.details['issues']
  if (!Array.isArray(issues)) throw new Error(`details.issues is not an array: ${JSON.stringify(e.details)}`)
  return issues as { code: string; path: readonly (string | number)[]; message: string }[]
}

/** `levels` nested arrays around a string: `nest(2)` is `[['x']]`. */
function nest(levels: number): unknown {
  let v: unknown = 'x'
  for (let i = 0; i < levels; i++) v = [v]
  return v
}

describe('createMessage', () => {
  it('wraps the payload in an envelope with an id and a creation time', () => {
    // given
    const payload = { role: 'user', content: "What's in README.md?" }

    // when
    const m = createMessage(payload as never)

    // then
    expect(m.payload).toEqual(payload)
    expect(Object.keys(m)).toEqual(['id', 'payload', 'format', 'createdAt'])
    expect(m.format).toBe('openai-chat')
    expect(Date.parse(m.createdAt)).not.toBeNaN()
    expect(Math.abs(Date.parse(m.createdAt) - Date.now())).toBeLessThan(5_000)
    expect(isMessage(m)).toBe(true)
  })

  describe('immutability', () => {
    const make = () =>
      createMessage({
        role: 'assistant',
        content: [{ type: 'text', text: 'hello' }],
        tool_calls: [{ id: 'call_01', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
        reasoning_details: [{ type: 'reasoning.text', text: 'thinking' }],
      })

    it('deep-freezes the envelope and every nested object and array', () => {
      // given
      const m = make()

      // when
      const objects: unknown[] = []
      const walk = (v: unknown): void => {
        if (typeof v !== 'object' || v === null) return
        objects.push(v)
        for (const child of Object.values(v)) walk(child)
      }
      walk(m)

      // then
      expect(objects.length).toBeGreaterThan(8)
      for (const o of objects) expect(Object.isFrozen(o)).toBe(true)
    })

    it('throws on every mutation attempt (ES modules are strict mode)', () => {
      // given
      const m = make() as unknown as Record<string, Record<string, unknown>>
      const payload = m['payload'] as Record<string, unknown>
      const content = payload['content'] as Record<string, unknown>[]
      const call = (payload['tool_calls'] as Record<string, Record<string, unknown>>[])[0] as Record<string, Record<string, unknown>>

      // when / then
      expect(() => {
        m['id'] = {}
      }).toThrow(TypeError)
      expect(() => {
        m['ephemeral'] = {}
      }).toThrow(TypeError)
      expect(() => {
        payload['content'] = 'changed'
      }).toThrow(TypeError)
      expect(() => {
        payload['extra'] = 1
      }).toThrow(TypeError)
      expect(() => {
        delete payload['role']
      }).toThrow(TypeError)
      expect(() => {
        ;(content[0] as Record<string, unknown>)['text'] = 'changed'
      }).toThrow(TypeError)
      expect(() => content.push({ type: 'text' })).toThrow(TypeError)
      expect(() => {
        ;(call['function'] as Record<string, unknown>)['arguments'] = '{}'
      }).toThrow(TypeError)
      expect(make().payload).toEqual(m['payload'])
    })

    it('copies the caller input: later mutation of it changes nothing', () => {
      // given
      const part = { type: 'text', text: 'original' }
      const input: Record<string, unknown> = { role: 'user', content: [part], extra: { nested: ['a'] } }
      const m = createMessage(input as never)
      const hash = contentHash(m)

      // when
      part.text = 'mutated'
      ;(input['extra'] as { nested: string[] }).nested.push('b')
      input['role'] = 'system'
      input['added'] = true

      // then
      expect(m.payload).toEqual({ role: 'user', content: [{ type: 'text', text: 'original' }], extra: { nested: ['a'] } })
      expect(m.payload).not.toBe(input)
      expect(Object.isFrozen(input)).toBe(false)
      expect(contentHash(m)).toBe(hash)
    })
  })

  describe('__proto__', () => {
    it('keeps a "__proto__" key from JSON as a plain own property, without prototype pollution', () => {
      // given: JSON.parse makes "__proto__" an own data property
      const input = JSON.parse('{"role":"user","content":"x","__proto__":{"polluted":true,"role":"system"}}') as unknown

      // when
      const m = createMessage(input as never)

      // then
      const payload = m.payload as Record<string, unknown>
      expect(Object.getPrototypeOf(payload)).toBe(Object.prototype)
      expect(Object.keys(payload)).toEqual(['role', 'content', '__proto__'])
      expect(Object.getOwnPropertyDescriptor(payload, '__proto__')?.value).toEqual({ polluted: true, role: 'system' })
      expect(payload['polluted']).toBeUndefined()
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
      expect(Object.prototype).not.toHaveProperty('polluted')
      expect(m.payload.role).toBe('user')
      expect(serializeMessage(m)).toContain('"__proto__":{"polluted":true,"role":"system"}')
      expect(contentHash(m)).not.toBe(contentHash(createMessage({ role: 'user', content: 'x' })))
    })

    it('keeps "__proto__" an own property in the wire copy too', () => {
      // given
      const m = createMessage(JSON.parse('{"role":"user","content":"x","__proto__":{"polluted":true}}'))

      // when
      const [wire] = toWire([m])

      // then
      expect(Object.getPrototypeOf(wire)).toBe(Object.prototype)
      expect(Object.keys(wire ?? {})).toContain('__proto__')
      expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
    })

    it('refuses an object whose prototype was set by a literal __proto__ (not a plain object)', () => {
      // given
      const input = { __proto__: { role: 'user' }, content: 'x' }

      // when
      const e = caught(() => createMessage(input as never))

      // then
      expect(e.code).toBe('INVALID_MESSAGE')
    })

    it('accepts null-prototype objects and stores them as plain objects', () => {
      // given
      const input = Object.assign(Object.create(null) as object, { role: 'user', content: 'x' })

      // when
      const m = createMessage(input as never)

      // then
      expect(Object.getPrototypeOf(m.payload)).toBe(Object.prototype)
      expect(m.payload).toEqual({ role: 'user', content: 'x' })
    })
  })

  describe('meta', () => {
    it('a value of meta with no JSON form is named as meta, not as the payload (details.field: meta)', () => {
      // given / when: before, "payload.at: only plain objects are allowed", with no field, for a payload without `at`
      let caught: unknown
      try {
        createMessage({ role: 'assistant', content: 'x' }, { meta: { at: new Date(0) } as never })
      } catch (error) {
        caught = error
      }

      // then
      expect(isTurnlogError(caught, 'INVALID_MESSAGE')).toBe(true)
      expect((caught as Error).message).toBe('meta.at: only plain objects are allowed')
      expect((caught as { details: unknown }).details).toMatchObject({ field: 'meta', issues: [{ path: ['at'] }] })
    })
  })

  describe('ids', () => {
    it('derives the id from externalId with scope null: UUIDv5 in EXTERNAL_ID_NAMESPACE (the ids made before scopes)', () => {
      // given
      const externalId = 'telegram:chat42:msg9001'

      // when
      const first = createMessage({ role: 'user', content: 'hi' }, { externalId, scope: null })
      const redelivered = createMessage({ role: 'user', content: 'hi' }, { externalId, scope: null })

      // then
      expect(first.id).toBe(uuidV5(externalId, EXTERNAL_ID_NAMESPACE))
      expect(first.id).toBe(messageIdFromExternal(externalId))
      expect(redelivered.id).toBe(first.id)
      expect(first.externalId).toBe(externalId)
      expect(createMessage({ role: 'user', content: 'hi' }, { externalId: `${externalId}x`, scope: null }).id).not.toBe(first.id)
    })

    it('regression (issue 13.16): one platform message id in two chats gives two ids; the same chat and id gives the same id', () => {
      // given: Telegram message ids are unique only per chat
      const inChat = (chat: string): string =>
        createMessage({ role: 'user', content: 'hi' }, { externalId: '9001', scope: `telegram:${chat}` }).id

      // when
      const [a, b, aAgain] = [inChat('42'), inChat('43'), inChat('42')]

      // then: UUIDv5 of the externalId in the scope's namespace (UUIDv5 of the scope in EXTERNAL_SCOPE_NAMESPACE)
      expect(a).not.toBe(b)
      expect(aAgain).toBe(a)
      expect(a).toBe(uuidV5('9001', uuidV5('telegram:42', EXTERNAL_SCOPE_NAMESPACE)))
      expect(a).toBe(messageIdFromExternal('9001', 'telegram:42'))
      expect(a).not.toBe(messageIdFromExternal('9001'))
    })

    it('keeps the scope in the envelope (externalScope), not for scope null; toMessage keeps it', () => {
      const scoped = createMessage({ role: 'user', content: 'hi' }, { externalId: '9001', scope: 'telegram:42' })
      const global = createMessage({ role: 'user', content: 'hi' }, { externalId: 'telegram:42:9001', scope: null })
      expect(scoped).toMatchObject({ externalId: '9001', externalScope: 'telegram:42' })
      expect('externalScope' in global).toBe(false)
      expect(toMessage(JSON.parse(serializeMessage(scoped)))).toEqual(scoped)
      expect(caught(() => toMessage({ ...scoped, externalScope: 7 })).code).toBe('INVALID_MESSAGE')
    })

    it('refuses an externalId without a scope, and an empty or non-string scope, with INVALID_INPUT naming the field', () => {
      for (const options of [
        { externalId: '9001' },
        { externalId: '9001', scope: '' },
        { externalId: '9001', scope: 42 as unknown as string },
      ]) {
        const e = caught(() => createMessage({ role: 'user', content: 'hi' }, options))
        expect(e.code).toBe('INVALID_INPUT')
        expect(e.details['field']).toBe('options.scope')
      }
    })

    it('uses options.id, lower-cased', () => {
      // given
      const id = '0190F5A2-3B4C-7D8E-9F01-23456789ABCD'

      // when
      const m = createMessage({ role: 'user', content: 'hi' }, { id })

      // then
      expect(m.id).toBe(id.toLowerCase())
      expect(m.externalId).toBeUndefined()
    })

    it('refuses an options.id that is not a UUID', () => {
      expect(caught(() => createMessage({ role: 'user', content: 'hi' }, { id: 'msg-1' })).code).toBe('INVALID_INPUT')
    })

    it('accepts id and externalId together when they agree', () => {
      // given
      const externalId = '1700000000.000100'
      const id = messageIdFromExternal(externalId, 'slack:T1:C2')

      // when
      const m = createMessage({ role: 'user', content: 'hi' }, { id: id.toUpperCase(), externalId, scope: 'slack:T1:C2' })

      // then
      expect(m.id).toBe(id)
      expect(m.externalId).toBe(externalId)
    })

    it('refuses id and externalId that disagree, saying which id was derived', () => {
      // given
      const externalId = 'slack:T1:C2:1700000000.000100'
      const id = '0190f5a2-3b4c-7d8e-9f01-23456789abcd'

      // when
      const e = caught(() => createMessage({ role: 'user', content: 'hi' }, { id, externalId, scope: null }))

      // then
      expect(e.code).toBe('INVALID_INPUT')
      expect(e.details).toEqual({ id, externalId, scope: null, derivedId: messageIdFromExternal(externalId) })
    })
  })

  describe('envelope options', () => {
    it('marks scaffolding ephemeral; ephemeral: false leaves no flag', () => {
      // given / when
      const nudge = createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true })
      const normal = createMessage({ role: 'user', content: 'hi' }, { ephemeral: false })

      // then
      expect(nudge.ephemeral).toBe(true)
      expect('ephemeral' in normal).toBe(false)
    })

    it('marks a streaming reply partial; refuses any other status', () => {
      // given / when
      const streaming = createMessage({ role: 'assistant', content: 'Hel' }, { status: 'partial' })
      const e = caught(() => createMessage({ role: 'assistant', content: 'Hello' }, { status: 'final' as 'partial' }))

      // then
      expect(streaming.status).toBe('partial')
      expect(e.code).toBe('INVALID_INPUT')
    })

    it('keeps createdAt as given (string or Date) and refuses an invalid one', () => {
      // given / when
      const fromString = createMessage({ role: 'user', content: 'hi' }, { createdAt: '2026-01-02T03:04:05.678+01:00' })
      const fromDate = createMessage({ role: 'user', content: 'hi' }, { createdAt: new Date(Date.UTC(2026, 0, 2)) })

      // then
      expect(fromString.createdAt).toBe('2026-01-02T03:04:05.678+01:00')
      expect(fromDate.createdAt).toBe('2026-01-02T00:00:00.000Z')
      expect(caught(() => createMessage({ role: 'user', content: 'hi' }, { createdAt: 'yesterday' })).code).toBe('INVALID_MESSAGE')
      expect(caught(() => createMessage({ role: 'user', content: 'hi' }, { createdAt: new Date(NaN) })).code).toBe('INVALID_MESSAGE')
    })
  })

  describe('invalid payloads', () => {
    it.each<[string, unknown]>([
      ['a string', 'hello'],
      ['null', null],
      ['an array', [{ role: 'user', content: 'hi' }]],
      ['no role', { content: 'hi' }],
      ['an unknown role', { role: 'function', content: 'hi' }],
      ['user content that is a number', { role: 'user', content: 42 }],
      ['user without content', { role: 'user' }],
      ['a content part without a type', { role: 'user', content: [{ text: 'hi' }] }],
      ['a tool result without tool_call_id or call_id', { role: 'tool', content: 'ok' }],
      [
        'a tool call without id or call_id',
        { role: 'assistant', content: null, tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ],
      [
        'a tool call with an empty id',
        { role: 'assistant', content: null, tool_calls: [{ id: '', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      ],
      ['tool_calls that is not an array', { role: 'assistant', content: null, tool_calls: { id: 'c' } }],
      ['a name that is not a string', { role: 'user', content: 'hi', name: 7 }],
    ])('refuses %s with INVALID_MESSAGE and details.issues', (_what, payload) => {
      // when
      const e = caught(() => createMessage(payload as never))

      // then
      expect(e.code).toBe('INVALID_MESSAGE')
      const issues = issuesOf(e)
      expect(issues.length).toBeGreaterThan(0)
      for (const issue of issues) {
        expect(typeof issue.code).toBe('string')
        expect(Array.isArray(issue.path)).toBe(true)
        expect(typeof issue.message).toBe('string')
      }
    })

    it('says where the problem is', () => {
      // when
      const e = caught(() => createMessage({ role: 'user', content: [{ type: 'text', text: 'a' }, { text: 'b' }] } as never))

      // then
      expect(issuesOf(e).some((i) => i.path.join('.') === 'content.1.type' || i.path.join('.') === 'content')).toBe(true)
    })

    class Point {
      x = 1
    }
    const cyclic: Record<string, unknown> = { role: 'user', content: 'x' }
    cyclic['self'] = cyclic
    const sparse: unknown[] = ['a']
    sparse[2] = 'c'

    it.each<[string, unknown, readonly (string | number)[]]>([
      ['NaN', { role: 'user', content: 'x', score: NaN }, ['score']],
      ['Infinity', { role: 'user', content: 'x', usage: { tokens: Infinity } }, ['usage', 'tokens']],
      ['-Infinity', { role: 'user', content: 'x', n: [-Infinity] }, ['n', 0]],
      ['undefined in an array', { role: 'user', content: 'x', list: [1, undefined] }, ['list', 1]],
      ['a hole in a sparse array', { role: 'user', content: 'x', list: sparse }, ['list', 1]],
      ['a function', { role: 'user', content: 'x', cb: () => 1 }, ['cb']],
      ['a symbol', { role: 'user', content: 'x', s: Symbol('s') }, ['s']],
      ['a bigint', { role: 'user', content: 'x', n: 1n }, ['n']],
      ['a Date', { role: 'user', content: 'x', at: new Date(0) }, ['at']],
      ['a Map', { role: 'user', content: 'x', m: new Map() }, ['m']],
      ['a class instance', { role: 'user', content: 'x', p: new Point() }, ['p']],
      ['a typed array', { role: 'user', content: 'x', bytes: new Uint8Array(2) }, ['bytes']],
      ['a cycle', cyclic, ['self']],
    ])('refuses %s instead of silently changing it', (_what, payload, path) => {
      // when
      const e = caught(() => createMessage(payload as never))

      // then
      expect(e.code).toBe('INVALID_MESSAGE')
      expect(issuesOf(e)[0]?.path).toEqual(path)
    })

    it('accepts a shared (non-cyclic) sub-object used twice', () => {
      // given
      const shared = { type: 'text', text: 'same' }

      // when
      const m = createMessage({ role: 'user', content: [shared, shared] })

      // then
      expect(m.payload.content).toEqual([shared, shared])
    })

    it('accepts 64 levels of nesting (the payload object included) and refuses 65', () => {
      // given: the payload is level 1, `deep` adds 63 or 64 levels of arrays
      const at64 = { role: 'user', content: 'x', deep: nest(63) }
      const at65 = { role: 'user', content: 'x', deep: nest(64) }

      // when
      const ok = createMessage(at64 as never)
      const e = caught(() => createMessage(at65 as never))

      // then
      expect(ok.payload['deep']).toEqual(nest(63))
      expect(e.code).toBe('INVALID_MESSAGE')
      expect(e.message).toMatch(/deeper than 64/)
    })

    it('refuses a 100k-deep stack bomb with INVALID_MESSAGE, not a RangeError', () => {
      expect(caught(() => createMessage({ role: 'user', content: 'x', deep: nest(100_000) })).code).toBe('INVALID_MESSAGE')
    })
  })

  describe('JSON normalisation', () => {
    it('drops object keys whose value is undefined, as JSON does', () => {
      // when
      const m = createMessage({ role: 'user', content: 'hi', name: undefined, extra: { a: undefined, b: 1 } })

      // then
      expect(Object.keys(m.payload)).toEqual(['role', 'content', 'extra'])
      expect(m.payload['extra']).toEqual({ b: 1 })
      expect(Object.keys(m.payload['extra'] as object)).toEqual(['b'])
    })

    it('stores -0 as 0 (JSON has no -0)', () => {
      // when
      const m = createMessage({ role: 'user', content: 'hi', n: -0 })

      // then
      expect(Object.is(m.payload['n'], 0)).toBe(true)
    })

    it('keeps NUL, lone surrogates and astral characters exactly', () => {
      // given
      const text = 'a\u0000b\ud800c\udfffd😀e\u202eשלום'

      // when
      const m = createMessage({ role: 'tool', tool_call_id: 'call_1', content: text })

      // then
      expect(m.payload.content).toBe(text)
      expect(m.payload.content).toHaveLength(text.length)
    })
  })
})
