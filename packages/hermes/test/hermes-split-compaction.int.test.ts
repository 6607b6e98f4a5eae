/**
 * A hermes compaction that kept a tool result whose call it summarised (hermes before its tool-pair
 * sanitising; domain brief §1, "Unpaired tool calls") is history: `importHermes` records it as hermes
 * did, although `compact` refuses to split a tool pair for a live writer (`allowSplitToolPairs`). The
 * live view equals hermes' active rows, and the audit reports the orphan result. Re-import is a no-op.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { audit } from '@turnlog/audit'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { hermesSessionId, importHermes } from '@turnlog/hermes'
import { HermesFixture } from './hermes-fixture.js'

let dir: string
let path: string
let store: PostgresStore
useTestStore((t) => ({ store } = t))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-split-'))
  path = join(dir, 'state.db')
  const f = new HermesFixture(path)
  f.session('split')
  f.add('split', { role: 'user', content: "What's in README.md?" })
  f.add('split', {
    role: 'assistant',
    content: '',
    tool_calls: [{ id: 'call_01', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
    finish_reason: 'tool_calls',
  })
  f.add('split', { role: 'tool', tool_call_id: 'call_01', content: '{"ok":true,"text":"# acme"}' })
  f.add('split', { role: 'assistant', content: 'It is acme.' })
  // the kept tail starts at the tool result: its call goes into the summary
  f.compact('split', { keepTail: 2, summary: 'the user asked about README.md' })
  f.add('split', { role: 'user', content: 'thanks' })
  f.close()
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('importHermes: a compaction that split a tool pair', () => {
  it('is recorded as hermes did it (live view = active rows), the audit reports the orphan, and re-import writes nothing', async () => {
    // when
    const first = await importHermes(store, path)
    const again = await importHermes(store, path)

    // then
    const [session] = first.sessions
    expect(session).toMatchObject({ compactions: 1, liveMatches: true })
    const sid = hermesSessionId('split')
    const loaded = await store.load(sid)
    expect(loaded.messages.map((m) => m.payload.role)).toEqual(['user', 'tool', 'assistant', 'user'])
    expect(loaded.pairing.orphans.map((o) => o.toolCallId)).toEqual(['call_01'])
    const findings = (await audit(store, sid)).findings.filter((f) => f.kind === 'orphan_tool_result')
    expect(findings.map((f) => f.messageIds)).toEqual([[loaded.messages[1]?.id]])
    expect(again.eventsWritten).toBe(0)
  })
})
