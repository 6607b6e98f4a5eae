import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createReadStream } from 'node:fs'
import { mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { contentHash, createMessage, newSessionId, parseChatMessage, serializeMessage } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { importTranscript, transcriptMessageId } from '@turnlog/audit'

let dir: string
let store: PostgresStore

const transcript = [
  { role: 'system', content: 'You are terse.' },
  { role: 'user', content: "What's in README.md?\u0000" },
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'call_01', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
    reasoning_content: '…',
  },
  { role: 'tool', tool_call_id: 'call_01', content: '{"ok":true,"text":"# acme"}' },
  { role: 'assistant', content: 'It says "# acme" 😀' },
  { role: 'user', content: 'ok' },
  { role: 'user', content: 'ok' },
]

async function file(name: string, lines: readonly string[]): Promise<string> {
  const path = join(dir, name)
  await writeFile(path, `${lines.join('\n')}\n`, 'utf8')
  return path
}

const read = (path: string): AsyncIterable<string> =>
  createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity })

useTestStore((t) => ({ store } = t))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-transcript-'))
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('importTranscript', () => {
  it('appends a plain transcript with deterministic ids; the same file again is a no-op', async () => {
    // given
    const path = await file('plain.jsonl', ['', ...transcript.map((m) => JSON.stringify(m)), ''])

    // when
    const first = await importTranscript(store, read(path), { tenantId: 'acme' })
    const again = await importTranscript(store, read(path), { tenantId: 'acme' })

    // then
    expect(first).toMatchObject({ appended: 7, duplicates: 0, skipped: 0, version: 7 })
    expect(again).toEqual({ ...first, appended: 0, duplicates: 7 })
    const loaded = await store.load(first.sessionId)
    expect(loaded.messages.map((m) => m.payload)).toEqual(transcript)
    expect(loaded.messages.map((m) => m.id)).toEqual(
      transcript.map((m, i) => transcriptMessageId(first.sessionId, i, contentHash(parseChatMessage(m)))),
    )
    // the two equal "ok" lines stay two messages: the repeat is evidence, not noise
    expect(new Set(loaded.messages.map((m) => m.id)).size).toBe(7)
    expect((await store.getSession(first.sessionId)).tenantId).toBe('acme')
  })

  it('keeps turnlog ids from envelope lines, skips ephemeral ones, and extends a given session', async () => {
    // given
    const sessionId = newSessionId()
    const known = createMessage({ role: 'user', content: 'with an id' }, { createdAt: '2026-02-02T02:02:02.000Z' })
    const nudge = createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true })
    const short = await file('short.jsonl', [serializeMessage(known), JSON.stringify(transcript[4])])
    const long = await file('long.jsonl', [
      serializeMessage(known),
      JSON.stringify(transcript[4]),
      serializeMessage(nudge),
      JSON.stringify({ role: 'user', content: 'next' }),
    ])

    // when
    const first = await importTranscript(store, read(short), { sessionId })
    const second = await importTranscript(store, read(long), { sessionId })

    // then
    expect(first).toMatchObject({ sessionId, appended: 2, duplicates: 0 })
    expect(second).toMatchObject({ sessionId, appended: 1, duplicates: 2, skipped: 1, version: 3 })
    const loaded = await store.load(sessionId)
    expect(loaded.messages[0]).toEqual(known)
    expect(loaded.messages.map((m) => m.payload.content)).toEqual(['with an id', transcript[4]?.content, 'next'])
  })

  it('hashes an envelope line by its whole payload: two payloads differing outside their own `payload` field are two transcripts', async () => {
    // given: json payloads that also have the shape of a message ({ payload } without a role)
    const line = (n: number) => JSON.stringify({ format: 'json', payload: { payload: { step: 1 }, n } })
    const one = await file('payload-field-1.jsonl', [line(1)])
    const two = await file('payload-field-2.jsonl', [line(2)])

    // when: before the fix both hashed as { step: 1 }: one session id, one message id, and a conflict
    const first = await importTranscript(store, read(one))
    const second = await importTranscript(store, read(two))

    // then
    expect(second.sessionId).not.toBe(first.sessionId)
    expect(second).toMatchObject({ appended: 1, duplicates: 0 })
    expect((await store.load(second.sessionId)).messages.map((m) => m.payload)).toEqual([{ payload: { step: 1 }, n: 2 }])
  })

  it('refuses malformed lines and invalid messages by line number, writing nothing', async () => {
    // given
    const sessionId = newSessionId()

    // when / then
    await expect(importTranscript(store, ['{"role":"user","content":"a"}', '{"role":', '{}'], { sessionId })).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: 2 },
    })
    await expect(
      importTranscript(store, ['{"role":"user","content":"a"}', '', '{"role":"tool","content":"no call id"}'], { sessionId }),
    ).rejects.toMatchObject({
      code: 'IMPORT_FAILED',
      details: { line: 3 },
    })
    await expect(store.getSession(sessionId)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
  })

  it('refuses an input with no line but blank ones (an empty file), creating nothing; a file of only ephemeral lines creates its session', async () => {
    // given: what a producer that died before writing leaves, with and without a session named
    const named = newSessionId()
    const sessionsBefore = (await store.sessions()).sessions.length
    const ephemeral = JSON.stringify({
      ...JSON.parse(serializeMessage(createMessage({ role: 'user', content: 'go on' }, { ephemeral: true }))),
    })

    // when
    const empty = importTranscript(store, [])
    const blank = importTranscript(store, ['', '  ', ''])
    const emptyNamed = importTranscript(store, [], { sessionId: named })
    await expect(empty).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 1 } })
    await expect(blank).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 3 } })
    await expect(emptyNamed).rejects.toMatchObject({ code: 'IMPORT_FAILED' })
    const onlyScaffolding = await importTranscript(store, [ephemeral])

    // then: nothing was created by the empty inputs; the scaffolding-only file is a session with nothing in it
    expect((await store.sessions()).sessions).toHaveLength(sessionsBefore + 1)
    await expect(store.getSession(named)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    expect(onlyScaffolding).toMatchObject({ appended: 0, skipped: 1, version: 0 })
  })

  it('reports an id stored with other content as a conflict on its line, writing nothing', async () => {
    // given
    const sessionId = newSessionId()
    const original = createMessage({ role: 'user', content: 'original' })
    await importTranscript(store, [serializeMessage(original)], { sessionId })
    const edited = JSON.stringify({ id: original.id, payload: { role: 'user', content: 'edited in place' } })

    // when / then
    await expect(importTranscript(store, [JSON.stringify({ role: 'user', content: 'new' }), edited], { sessionId })).rejects.toMatchObject({
      code: 'MESSAGE_CONFLICT',
      details: { line: 2, messageId: original.id },
    })
    expect((await store.getSession(sessionId)).version).toBe(1)
  })
})
