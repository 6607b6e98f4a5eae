/**
 * `sameRealmCopy` with objects really made in another realm (a `node:vm` context), as the Agents SDK's
 * `structuredClone` makes them under Jest: they become plain objects turnlog accepts; a `Date`, typed
 * arrays and class instances stay what they are, so turnlog still refuses them.
 */
import { runInNewContext } from 'node:vm'
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError } from '@turnlog/core'
import { agentItemMessage } from '@turnlog/openai-agents'
import { sameRealmCopy } from '../src/same-realm-copy.js'

const foreign = (source: string): unknown => runInNewContext(`(${source})`)

/** What `fn` throws (`undefined` when it returns). */
function thrownBy(fn: () => unknown): unknown {
  try {
    fn()
  } catch (e) {
    return e
  }
  return undefined
}

describe('sameRealmCopy', () => {
  it('turns another realm plain objects and arrays into this realm ones, keys and values intact', () => {
    // given
    const value = foreign('{ role: "user", content: [{ type: "input_text", text: "hi" }], providerData: { n: 1, nested: { ok: true } } }')
    expect(Object.getPrototypeOf(value)).not.toBe(Object.prototype)

    // when
    const copy = sameRealmCopy(value) as { content: object[]; providerData: object }

    // then
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.getPrototypeOf(copy.content)).toBe(Array.prototype)
    expect(Object.getPrototypeOf(copy.providerData)).toBe(Object.prototype)
    expect(JSON.stringify(copy)).toBe(JSON.stringify(value))
    expect(() => createMessage(value as never, { format: 'openai-agents' })).toThrow()
    expect(agentItemMessage(value as never).payload).toEqual({
      role: 'user',
      content: [{ type: 'input_text', text: 'hi' }],
      providerData: { n: 1, nested: { ok: true } },
    })
  })

  it('keeps a "__proto__" key as data and a null-prototype object as such', () => {
    const value = JSON.parse('{"__proto__": {"x": 1}, "a": 2}') as object
    const copy = sameRealmCopy(value) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy)).toEqual(['__proto__', 'a'])
    const bare = sameRealmCopy(Object.assign(Object.create(null) as object, { a: 1 }))
    expect(Object.getPrototypeOf(bare)).toBeNull()
  })

  it('leaves a Date, typed arrays, class instances and cycles for turnlog to refuse', () => {
    class Box {
      readonly v = 1
    }
    const cycle: Record<string, unknown> = { role: 'user', content: 'x' }
    cycle['providerData'] = { self: cycle }
    for (const providerData of [{ d: new Date(0) }, { b: new Uint8Array([1]) }, { c: new Box() }, foreign('{ d: new Date(0) }')]) {
      const item = { role: 'user', content: 'x', providerData }
      const error = thrownBy(() => agentItemMessage(item as never))
      expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
    }
    expect(() => agentItemMessage(cycle as never)).toThrow()
  })

  it('an item whose getter throws is INVALID_MESSAGE without its content', () => {
    const item = { role: 'user' }
    Object.defineProperty(item, 'content', {
      enumerable: true,
      get: () => {
        throw new Error('secret-content')
      },
    })
    const error = thrownBy(() => agentItemMessage(item as never))
    expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
    expect((error as Error).message).not.toContain('secret-content')
  })
})
