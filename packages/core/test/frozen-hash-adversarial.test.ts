/**
 * Attacks the content-hash memo with values that look frozen but are not immutable (packages/core/README.md,
 * "Hashes of deep-frozen payloads … are memoised"; docs/domain incident #92881: the stored bytes must
 * never be stale after an edit). `Object.freeze` fixes an accessor property, not what its getter returns,
 * so a frozen object with a getter can still change its JSON: its hash must follow the content, never a
 * memoised earlier value, and `primeContentHash` must not pin a hash on it.
 */
import { describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, primeContentHash, type ChatMessage } from '@turnlog/core'

/** A frozen payload whose `content` getter reads a mutable cell. */
function getterPayload(): { readonly payload: ChatMessage; readonly set: (text: string) => void } {
  let text = 'before'
  const payload = Object.freeze({
    role: 'user' as const,
    get content(): string {
      return text
    },
  })
  return { payload, set: (t) => (text = t) }
}

describe('contentHash of frozen values whose JSON can still change', () => {
  it('follows a getter on a frozen object: the hash after the change is the hash of the new content', () => {
    // given
    const { payload, set } = getterPayload()
    const first = contentHash(payload)

    // when: the frozen object's JSON changes
    set('after')

    // then
    expect(first).toBe(contentHash({ role: 'user', content: 'before' }))
    expect(contentHash(payload)).toBe(contentHash({ role: 'user', content: 'after' }))
  })

  it('follows a getter deep inside frozen arrays and objects', () => {
    // given
    let n = 0
    const part = Object.freeze(
      Object.defineProperty({ type: 'text' }, 'text', { get: () => `n=${n}`, enumerable: true, configurable: false }),
    )
    const payload = Object.freeze({ role: 'user' as const, content: Object.freeze([part]) })
    const first = contentHash(payload)

    // when
    n = 1

    // then
    expect(first).toBe(contentHash({ role: 'user', content: [{ type: 'text', text: 'n=0' }] }))
    expect(contentHash(payload)).toBe(contentHash({ role: 'user', content: [{ type: 'text', text: 'n=1' }] }))
  })

  it('does not let primeContentHash pin a hash on such a value', () => {
    // given
    const { payload, set } = getterPayload()
    primeContentHash(payload, contentHash({ role: 'user', content: 'before' }))

    // when
    set('after')

    // then
    expect(contentHash(payload)).toBe(contentHash({ role: 'user', content: 'after' }))
  })

  it('still memoises a frozen plain-data payload, and createMessage copies a getter payload into data', () => {
    // given
    const { payload, set } = getterPayload()
    const message = createMessage(payload)
    const hash = contentHash(message)

    // when: the caller's object changes after the message was made
    set('after')

    // then: the message kept the content it was given (a copy of the value the getter returned)
    expect(Object.getOwnPropertyDescriptor(message.payload, 'content')).toMatchObject({ value: 'before', writable: false })
    expect(contentHash(message)).toBe(hash)
    expect(contentHash(message)).toBe(contentHash({ role: 'user', content: 'before' }))
  })
})
