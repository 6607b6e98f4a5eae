/**
 * `compact` with summary messages of another format (an `openai-responses` compaction item, an
 * `anthropic` user turn), on Postgres and on PGlite: the summary's format and meta are stored and
 * loaded, and the audit is clean. The same summary placed by `sync` (`compaction.summaryIds`) too.
 */
import { describe, expect, it } from '@jest/globals'
import { audit, verifyChain } from '@turnlog/audit'
import { ANTHROPIC_FORMAT, OPENAI_RESPONSES_FORMAT, createMessage, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, useTestStoreOfKind } from '@turnlog/testing'

const SUMMARIES = [
  [OPENAI_RESPONSES_FORMAT, { type: 'compaction', encrypted_content: 'gAAAAC…' }],
  [ANTHROPIC_FORMAT, { role: 'user', content: [{ type: 'text', text: 'Summary: the user asked for the weather.' }] }],
] as const

describe.each(STORE_KINDS)('compact with summaries of another format (%s)', (kind) => {
  let opened: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store: opened } = t))
  const store = (): PostgresStore => opened

  /** The loaded session as (id, format, meta, payload), after checking the chain and that the audit is clean. */
  async function loadedAndClean(sid: string): Promise<unknown[]> {
    expect((await verifyChain(store(), sid)).breaks).toEqual([])
    const report = await audit(store(), sid)
    expect(report.findings.filter((f) => f.severity === 'critical' || f.kind.includes('chain') || f.kind.includes('tool_'))).toEqual([])
    return ((await store().load(sid)).messages as Message<unknown>[]).map((m) => [m.id, m.format, m.meta, m.payload])
  }

  it.each(SUMMARIES)(
    '%s summary: format and meta stored and loaded, audit clean',
    async (format, payload) => {
      const sid = await store().createSession()
      const a = createMessage({ role: 'user', content: 'weather in Paris?' })
      const b = createMessage({ role: 'assistant', content: '18 degrees' })
      await store().append(sid, [a, b])
      const summary: Message<unknown> = createMessage(payload, { format, meta: { kind: 'summary' } })
      await store().compact(sid, { covered: [a.id, b.id], summary })
      expect(await loadedAndClean(sid)).toEqual([[summary.id, format, { kind: 'summary' }, payload]])
    },
    120_000,
  )

  it.each(SUMMARIES)(
    '%s summary placed by sync (compaction.summaryIds): the same, before the kept tail',
    async (format, payload) => {
      const sid = await store().createSession()
      const a = createMessage({ role: 'user', content: 'weather in Paris?' })
      const b = createMessage({ role: 'assistant', content: '18 degrees' })
      const c = createMessage({ role: 'user', content: 'and tomorrow?' })
      await store().append(sid, [a, b, c])
      const summary: Message<unknown> = createMessage(payload, { format, meta: { kind: 'summary' } })
      const result = await store().sync(sid, [summary, c], { compaction: { summaryIds: [summary.id] } })
      expect(result.compacted).toEqual([{ summary: [summary.id], covered: [a.id, b.id] }])
      expect(await loadedAndClean(sid)).toEqual([
        [summary.id, format, { kind: 'summary' }, payload],
        [c.id, 'openai-chat', undefined, c.payload],
      ])
    },
    120_000,
  )
})
