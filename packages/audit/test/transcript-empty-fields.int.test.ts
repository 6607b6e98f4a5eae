/**
 * docs/audit.md, "Transcripts the audit accepts": a provider's reply carries fields that say "none"
 * (the `openai` SDK's `refusal: null` and `annotations: []`, vLLM's `tool_calls: null`), and a
 * transcript of what was said (a UI log, a `{ role, content }` JSONL) leaves them out, or the reverse.
 * Before, matching was byte-exact: every such reply was a critical `lost_turn` ("the transcript has
 * it, the log never stored it") beside an `unexpected_message`, though `replay` showed it stored (a
 * new user's walkthrough, `turnlog audit <id> --transcript seen.jsonl`). Now a field set to null, or an
 * empty list other than `content`, is the field left out, on both sides; every other difference still
 * counts.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, type ChatMessage, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { audit } from '@turnlog/audit'
import { findingLines } from './audit-fixtures.js'

let store: PostgresStore
useTestStore((t) => ({ store } = t))

const kinds = findingLines

/** Messages created one after the other (strictly increasing createdAt). */
function inOrder(...payloads: object[]): Message[] {
  const base = Date.parse('2026-03-01T10:00:00.000Z')
  return payloads.map((p, i) => createMessage(p as ChatMessage, { createdAt: new Date(base + i * 1000).toISOString() }))
}

/** The SDK's reply as `createMessage(reply.choices[0].message)` stores it. */
const sdkReply = (content: string): object => ({ role: 'assistant', content, refusal: null, annotations: [] })

async function transcriptFindings(messages: Message[], transcript: unknown[]): Promise<string[]> {
  const session = await store.createSession()
  await store.append(session, messages)
  const report = await audit(store, session, { transcript, checks: ['transcript'] })
  return kinds(report.findings)
}

describe('a transcript that leaves out (or adds) the fields a reply sets to none', () => {
  it('matches an SDK reply stored with refusal: null and annotations: [] by its role and content alone', async () => {
    const messages = inOrder({ role: 'user', content: 'hi' }, sdkReply('hello'), { role: 'user', content: 'bye' }, sdkReply('bye!'))
    const seen = [
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: 'hello' },
      { role: 'user', content: 'bye' },
      { role: 'assistant', content: 'bye!' },
    ]
    expect(await transcriptFindings(messages, seen)).toEqual([])
  })

  it('matches the other way: nulls in the transcript, none in the log (a Python model_dump of the reply)', async () => {
    const messages = inOrder({ role: 'user', content: 'hi' }, { role: 'assistant', content: 'hello' })
    const seen = [
      { role: 'user', content: 'hi', name: null },
      { role: 'assistant', content: 'hello', refusal: null, tool_calls: null, function_call: null, audio: null },
    ]
    expect(await transcriptFindings(messages, seen)).toEqual([])
  })

  it('matches an item with the message id, as by content (no content_not_stored)', async () => {
    const messages = inOrder({ role: 'user', content: 'hi' }, sdkReply('hello'))
    const seen = [
      { id: messages[0]!.id, role: 'user', content: 'hi' },
      { id: messages[1]!.id, role: 'assistant', content: 'hello' },
    ]
    expect(await transcriptFindings(messages, seen)).toEqual([])
  })

  it('still reports a different content, a different role, a non-empty field and an empty content as not stored', async () => {
    // each transcript has the user message and one wrong reply (each against a session of its own)
    for (const wrong of [
      { role: 'assistant', content: 'hello!' },
      { role: 'user', content: 'hello' },
      { role: 'assistant', content: 'hello', refusal: 'I cannot' },
      { role: 'assistant', content: 'hello', annotations: [{ type: 'url_citation' }] },
    ]) {
      const messages = inOrder({ role: 'user', content: 'hi' }, sdkReply('hello'))
      expect((await transcriptFindings(messages, [{ role: 'user', content: 'hi' }, wrong])).sort()).toEqual([
        'critical lost_turn not_in_log',
        'error unexpected_message',
      ])
    }
    // content: [] is content, not a field left out
    const empty = inOrder({ role: 'user', content: 'hi' }, { role: 'assistant', content: [] })
    expect((await transcriptFindings(empty, [{ role: 'user', content: 'hi' }, { role: 'assistant' }])).sort()).toEqual([
      'critical lost_turn not_in_log',
      'error unexpected_message',
    ])
    // under the message's id, another content is still content_not_stored
    const s2 = inOrder({ role: 'user', content: 'hi' }, sdkReply('hello'))
    expect(
      await transcriptFindings(s2, [
        { role: 'user', content: 'hi' },
        { id: s2[1]!.id, role: 'assistant', content: 'hallo' },
      ]),
    ).toEqual(['error lost_turn content_not_stored'])
  })

  it('counts copies as before: a reply said twice must be stored twice', async () => {
    const messages = inOrder({ role: 'user', content: 'again?' }, sdkReply('yes'))
    const seen = [
      { role: 'user', content: 'again?' },
      { role: 'assistant', content: 'yes' },
      { role: 'assistant', content: 'yes' },
    ]
    expect(await transcriptFindings(messages, seen)).toEqual(['critical lost_turn not_in_log'])
  })

  it('keeps a retried turn clean: the re-sent reply matched by its content without the empty fields', async () => {
    // given a reply rewound with its attempt and the same reply given again under a new id
    const [hi, first] = inOrder({ role: 'user', content: 'hi' }, sdkReply('hello')) as [Message, Message]
    const session = await store.createSession()
    await store.append(session, [hi, first])
    await store.rewind(session, { after: hi.id })
    const again = createMessage(sdkReply('hello') as ChatMessage, { createdAt: '2026-03-01T10:00:05.000Z' })
    await store.append(session, [again])
    // when a transcript of what the model sees, without the empty fields
    const report = await audit(store, session, {
      transcript: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: 'hello' },
      ],
      checks: ['transcript'],
    })
    // then the live copy takes the item
    expect(kinds(report.findings)).toEqual([])
  })
})
