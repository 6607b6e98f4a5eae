import { describe, expect, it } from '@jest/globals'
import { AIMessage, AIMessageChunk, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint'
import { createMessage } from '@turnlog/core'
import { decodeLangChainMessage, encodeLangChainMessage, isMirrorableMessageList } from '@turnlog/langgraph'
import fc from 'fast-check'

// The payload a LangChain message is stored as: reviving it gives the same message back, and writing
// the revived message again gives the same payload (else every step would record a revision).

const serde = new JsonPlusSerializer()
const text = fc.string({ unit: 'binary', maxLength: 40 }) // any code points, NUL and lone surrogates included
const id = fc.uuid()
const message: fc.Arbitrary<BaseMessage> = fc.oneof(
  fc.record({ id, content: text }).map((f) => new HumanMessage(f)),
  fc.record({ id, content: text }).map((f) => new SystemMessage(f)),
  fc.record({ id, content: text, call: fc.string({ minLength: 1, maxLength: 8 }), n: fc.integer() }).map(
    (f) =>
      new AIMessage({
        id: f.id,
        content: f.content,
        tool_calls: [{ id: f.call, name: 'add', args: { n: f.n, s: f.content }, type: 'tool_call' }],
      }),
  ),
  fc.record({ id, content: text }).map((f) => new AIMessageChunk(f)),
  fc
    .record({ id, content: text, call: fc.string({ minLength: 1, maxLength: 8 }) })
    .map((f) => new ToolMessage({ id: f.id, content: f.content, tool_call_id: f.call })),
)

describe('the LangChain message codec', () => {
  it('round-trips every message, and a revived message encodes to the same payload', async () => {
    await fc.assert(
      fc.asyncProperty(message, async (m) => {
        const payload = await encodeLangChainMessage(serde, m)
        expect(payload).toBeDefined()
        const stored = createMessage(payload as Record<string, unknown>, { format: 'json', externalId: m.id as string, scope: 's' })
        const revived = await decodeLangChainMessage(serde, stored)
        expect(revived.constructor).toBe(m.constructor)
        expect(revived.id).toBe(m.id)
        expect(revived.content).toBe(m.content)
        expect(await encodeLangChainMessage(serde, revived)).toEqual(payload)
      }),
      { numRuns: 200 },
    )
  })

  it('mirrors only lists of messages that all carry an id', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(message, { maxLength: 4 }), fc.boolean(), async (list, dropOne) => {
        const first = list[0]
        if (dropOne && first !== undefined) (first as { id?: string | undefined }).id = undefined
        expect(isMirrorableMessageList(list)).toBe(!(dropOne && first !== undefined))
      }),
    )
    expect(isMirrorableMessageList(['hi'])).toBe(false)
    expect(isMirrorableMessageList({ messages: [] })).toBe(false)
  })
})
