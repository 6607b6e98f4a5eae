import { describe, expect, it } from '@jest/globals'
import { messageIdFromExternal, parseMessageId, parseSessionId } from '@turnlog/core'
import { chatMessageId, chatScope, chatSessionId, generateMessageId } from '@turnlog/ai-sdk'

describe('chat ids', () => {
  it('a client id maps to one turnlog id per chat: deterministic, scoped, a UUID', () => {
    // given a useChat id (16 random characters, not a UUID)
    const client = 'Xq3LpR8sT0vWz2Ab'
    // then
    expect(chatMessageId('chat-1', client)).toBe(chatMessageId('chat-1', client))
    expect(chatMessageId('chat-1', client)).not.toBe(chatMessageId('chat-2', client))
    expect(chatMessageId('chat-1', client)).toBe(messageIdFromExternal(client, chatScope('chat-1')))
    expect(parseMessageId(chatMessageId('chat-1', client))).toBe(chatMessageId('chat-1', client))
    expect(chatSessionId('chat-1')).toBe(parseSessionId(chatSessionId('chat-1')))
    expect(chatSessionId('chat-1')).not.toBe(chatSessionId('chat-2'))
  })

  it('generateMessageId mints distinct time-ordered turnlog ids (UUIDv7)', () => {
    const ids = Array.from({ length: 50 }, () => generateMessageId())
    expect(new Set(ids).size).toBe(50)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect([...ids].sort()).toEqual(ids)
  })

  it('refuses empty ids with INVALID_INPUT', () => {
    expect(() => chatSessionId('')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
    expect(() => chatMessageId('chat', '')).toThrow(expect.objectContaining({ code: 'INVALID_INPUT' }))
  })
})
