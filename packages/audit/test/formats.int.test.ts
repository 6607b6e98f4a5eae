/**
 * Message formats through the audit package: export/import is lossless for every format (format and
 * meta kept, hashes and chain verified), and the audit names the format of each pairing finding.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, registerMessageFormat, toWire, type Message, type MessageFormat } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { openTestStore, type OpenedTestStore } from '@turnlog/testing'
import { audit, exportSessions, importEvents, verifyChain } from '@turnlog/audit'
import { z } from 'zod'

/** A Responses-like item format, registered as an application registers its own. */
type Item =
  | { readonly type: 'function_call'; readonly call_id: string }
  | { readonly type: 'function_call_output'; readonly call_id: string; readonly output: string }
const itemsFormat: MessageFormat<Item> = {
  name: 'audit-items',
  schema: z.discriminatedUnion('type', [
    z.looseObject({ type: z.literal('function_call'), call_id: z.string().min(1) }),
    z.looseObject({ type: z.literal('function_call_output'), call_id: z.string().min(1), output: z.string() }),
  ]),
  toolCalls: (p) => (p.type === 'function_call' ? [p.call_id] : []),
  toolResults: (p) => (p.type === 'function_call_output' ? [p.call_id] : []),
  interruptedResults: (ids, output) => ids.map((call_id) => ({ type: 'function_call_output', call_id, output })),
  toWire: (p) => JSON.parse(JSON.stringify(p)) as unknown,
  preview: (p) => ({ role: 'tool', kind: p.type, text: p.type === 'function_call_output' ? p.output : '' }),
}
registerMessageFormat(itemsFormat)

let source: PostgresStore
let target: PostgresStore
const opened: OpenedTestStore[] = []

beforeAll(async () => {
  for (let i = 0; i < 2; i++) opened.push(await openTestStore('pglite'))
  ;[source, target] = opened.map((o) => o.store) as [PostgresStore, PostgresStore]
}, 60_000)

afterAll(async () => {
  for (const o of opened) await o.close()
})

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const line of lines) out.push(line)
  return out
}

async function* each(lines: readonly string[]): AsyncIterable<string> {
  for (const line of lines) yield line
}

describe('formats through export, import and the audit', () => {
  it('a session mixing formats exports and imports losslessly: format, meta, payload text, hashes and chain', async () => {
    // given
    const sid = await source.createSession()
    const messages: Message<unknown>[] = [
      createMessage({ role: 'user', content: 'a\u0000b \ud800' }, { meta: { channel: 'web' } }),
      createMessage({ kind: 'note', text: 'lone \udfff', nested: { n: [1, null] } }, { format: 'json', meta: { app: { id: 7 } } }),
      createMessage({ type: 'function_call', call_id: 'i1' }, { format: 'audit-items' }),
      createMessage({ type: 'function_call_output', call_id: 'i1', output: 'ok' }, { format: 'audit-items', meta: { latencyMs: 12 } }),
    ]
    await source.append(sid, messages)
    await source.revise(sid, messages[1]?.id ?? '', { kind: 'note', text: 'edited' })

    // when
    const lines = await collect(exportSessions(source, { sessionIds: [sid] }))
    await importEvents(target, each(lines))
    const before = await source.load(sid)
    const after = await target.load(sid)

    // then
    expect(after.messages.map((m) => [m.id, m.format, m.meta, JSON.stringify(m.payload)])).toEqual(
      before.messages.map((m) => [m.id, m.format, m.meta, JSON.stringify(m.payload)]),
    )
    expect(after.messages.map((m) => m.format)).toEqual(['openai-chat', 'json', 'audit-items', 'audit-items'])
    expect(JSON.stringify(toWire(after.messages as Message<unknown>[]))).toBe(JSON.stringify(toWire(before.messages as Message<unknown>[])))
    expect((await verifyChain(target, sid)).ok).toBe(true)
    expect((await collect(exportSessions(target, { sessionIds: [sid] }))).slice(1)).toEqual(lines.slice(1))
  })

  it('the audit names the format of each pairing finding', async () => {
    // given: an unanswered chat call, an orphan item output, a json message that answers nothing
    const sid = await source.createSession()
    const call = createMessage({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    })
    const orphan = createMessage({ type: 'function_call_output', call_id: 'nope', output: 'x' }, { format: 'audit-items' })
    const lookalike = createMessage({ role: 'tool', tool_call_id: 'c1', content: 'x' }, { format: 'json' })
    await source.append(sid, [createMessage({ role: 'user', content: 'go' }), call, orphan, lookalike])

    // when
    const report = await audit(source, sid)
    const pairing = report.findings.filter((f) => f.kind === 'unanswered_tool_call' || f.kind === 'orphan_tool_result')

    // then
    expect(pairing.map((f) => [f.kind, f.messageIds, f.evidence])).toEqual([
      ['unanswered_tool_call', [call.id], { toolCallId: 'c1', format: 'openai-chat' }],
      ['orphan_tool_result', [orphan.id], { toolCallId: 'nope', format: 'audit-items' }],
    ])
    expect(pairing[1]?.explanation).toContain('(audit-items)')
  })
})
