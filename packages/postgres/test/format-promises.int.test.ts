/**
 * docs/formats.md, the promises about the store that no other test pinned down (an audit of the
 * document, promise by promise). The pure promises are in packages/core/test/format-promises.test.ts;
 * the store contract (describe-formats-contract.ts) covers round trips, meta and the stored envelope.
 */
import { execFile } from 'node:child_process'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { promisify } from 'node:util'
import { describe, expect, it } from '@jest/globals'
import {
  contentHash,
  createMessage,
  messageFormatNames,
  newMessageId,
  toWire,
  toolPairing,
  type Message,
  type StoredEvent,
} from '@turnlog/core'
import { audit, exportSessions, importEvents, verifyChain } from '@turnlog/audit'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, useTestStore, type TestDatabase } from '@turnlog/testing'

const SUPPORT = join(dirname(fileURLToPath(import.meta.url)), 'support')

let db: TestDatabase
let store: PostgresStore

useTestStore((t) => ({ db, store } = t))

describe('docs/formats.md promises (store)', () => {
  it('the content hash covers the payload only: a known id re-appended with the same payload under another format is a duplicate, and the first format stays', async () => {
    // given a chat message stored
    const sid = await store.createSession()
    const id = newMessageId()
    const payload = { role: 'user' as const, content: 'same text' }
    const chat = createMessage(payload, { id })
    await store.append(sid, [chat])

    // when the same id and payload come again as json
    const again = await store.append(sid, [createMessage<object>(payload, { id, format: 'json' })])
    const { messages } = await store.load(sid)

    // then nothing is written and the message keeps its first format
    expect(again).toMatchObject({ appended: [], duplicates: [id] })
    expect(messages.map((m) => [m.id, m.format, m.payload])).toEqual([[id, 'openai-chat', payload]])
    expect((await store.getSession(sid)).version).toBe(1)
    expect(contentHash(messages[0] as Message)).toBe(contentHash(chat))
  })

  it('redaction works for every format: the stored placeholder keeps the format, meta and pairing ids, and nothing of a tool input (emptied: not even its name or id fields)', async () => {
    // given an Anthropic tool call whose input holds data under keys a placeholder keeps elsewhere
    const sid = await store.createSession()
    const call = createMessage<object>(
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { name: 'Alice Secret', id: 'SSN-123-45' } }],
      },
      { format: 'anthropic', meta: { model: 'm' } },
    )
    const result = createMessage<object>(
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'found' }] },
      { format: 'anthropic' },
    )
    await store.append(sid, [call, result])

    // when
    await store.redact(sid, call.id)
    const { messages } = await store.load(sid)

    // then
    const redacted = messages[0]
    expect(redacted).toMatchObject({ id: call.id, format: 'anthropic', meta: { model: 'm' } })
    expect(redacted?.payload).toEqual({
      role: 'assistant',
      content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }],
    })
    expect(JSON.stringify(messages)).not.toContain('Alice Secret')
    expect(JSON.stringify(messages)).not.toContain('SSN-123-45')
  })

  it('a message stored with a format this process has not registered is still loaded, hashed, exported and audited, read as opaque (no pairing); importing its export needs the format', async () => {
    // given another process, which has the application format, wrote a call and an orphan output in it
    const sid = await store.createSession()
    const { stdout } = await promisify(execFile)(process.execPath, [
      join(SUPPORT, 'app-format-writer.js'),
      JSON.stringify({ connectionString: db.connectionString, sessionId: sid }),
    ])
    const { ids } = JSON.parse(stdout) as { ids: string[] }
    expect(messageFormatNames()).not.toContain('promises.app-items')

    // when this process loads them
    const { messages } = await store.load(sid)
    const events: StoredEvent[] = []
    for await (const e of store.events(sid)) events.push(e)

    // then they come back whole under their format, their hashes are the store's, and nothing pairs
    expect(messages.map((m) => [m.id, m.format])).toEqual(ids.map((id) => [id, 'promises.app-items']))
    expect(messages.map((m) => m.payload)).toEqual([
      { kind: 'call', id: 'c1', text: 'a\u0000b' },
      { kind: 'output', id: 'c9', text: 'x' },
    ])
    expect(messages.map((m) => contentHash(m))).toEqual(events.map((e) => e.contentHash))
    expect(toolPairing(messages)).toEqual({ ok: true, unanswered: [], orphans: [], duplicates: [], duplicateCalls: [], reusedCalls: [] })
    expect(toWire(messages as Message<unknown>[], { repairPairing: true })).toEqual(messages.map((m) => m.payload))
    expect((await verifyChain(store, sid)).ok).toBe(true)
    const report = await audit(store, sid)
    expect(report.findings.filter((f) => f.kind.includes('tool'))).toEqual([])

    // and its export carries the format, but another store cannot import it without the format
    const lines: string[] = []
    for await (const line of exportSessions(store, { sessionIds: [sid] })) lines.push(line)
    expect(lines.filter((l) => l.includes('"format":"promises.app-items"'))).toHaveLength(2)
    const target = await createTestDatabase()
    const other = await openStore({ connectionString: target.connectionString })
    try {
      const refused = await importEvents(other, lines).then(
        () => undefined,
        (e: unknown) => e,
      )
      expect(refused).toMatchObject({ code: 'IMPORT_FAILED', cause: { code: 'INVALID_MESSAGE' } })
      await expect(other.getSession(sid)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    } finally {
      await other.close()
      await target.drop()
    }
  })
})
