/**
 * `compact` with summary messages of another format (an `openai-responses` compaction item, an
 * `anthropic` user turn): the summary's format and meta are stored and loaded, and the audit is clean.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { audit, verifyChain } from '@turnlog/audit'
import { ANTHROPIC_FORMAT, OPENAI_RESPONSES_FORMAT, createMessage, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'

let store: PostgresStore

beforeAll(async () => {
  store = await openStore({ embedded: true })
}, 300_000)

afterAll(async () => {
  await store?.close()
})

describe('compact with summaries of another format (PGlite)', () => {
  it.each([
    [OPENAI_RESPONSES_FORMAT, { type: 'compaction', encrypted_content: 'gAAAAC…' }],
    [ANTHROPIC_FORMAT, { role: 'user', content: [{ type: 'text', text: 'Summary: the user asked for the weather.' }] }],
  ] as const)(
    '%s summary: format and meta stored and loaded, audit clean',
    async (format, payload) => {
      const sid = await store.createSession()
      const a = createMessage({ role: 'user', content: 'weather in Paris?' })
      const b = createMessage({ role: 'assistant', content: '18 degrees' })
      await store.append(sid, [a, b])
      const summary: Message<unknown> = createMessage(payload, { format, meta: { kind: 'summary' } })
      await store.compact(sid, { covered: [a.id, b.id], summary })
      const loaded = (await store.load(sid)).messages as Message<unknown>[]
      expect(loaded.map((m) => [m.id, m.format, m.meta, m.payload])).toEqual([[summary.id, format, { kind: 'summary' }, payload]])
      expect((await verifyChain(store, sid)).breaks).toEqual([])
      const report = await audit(store, sid)
      expect(report.findings.filter((f) => f.severity === 'critical' || f.kind.includes('chain') || f.kind.includes('tool_'))).toEqual([])
    },
    120_000,
  )
})
