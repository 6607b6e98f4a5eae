/**
 * A compaction must not split a tool call from its result (incident class "engine state breaking the
 * provider request", domain brief §1 "Unpaired tool calls"): a live list holding an orphan tool result
 * or an unanswered call is refused with HTTP 400 by every provider. `compact` refuses such a covered
 * set (`INVALID_INPUT`, `details.reason: 'splits_tool_pair'`); the paths that record what already
 * happened do not: `sync` (a mirror of the runtime's list), `allowSplitToolPairs` (importers, adapters)
 * and `importEvents` of a log that holds one. Each then leaves the evidence the audit reports. On
 * Postgres and PGlite.
 */
import { describe, expect, it } from '@jest/globals'
import { audit, exportSessions, importEvents, verifyChain } from '@turnlog/audit'
import { createMessage, isTurnlogError, toWire, type Message, type StoredEvent } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, useTestStoreOfKind } from '@turnlog/testing'

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })
const call = (id: string): Message =>
  createMessage({
    role: 'assistant',
    content: '',
    tool_calls: [{ id, type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
    finish_reason: 'tool_calls',
  })
const result = (id: string): Message => createMessage({ role: 'tool', tool_call_id: id, content: '{"ok":true,"text":"# acme"}' })

async function eventsOf(store: PostgresStore, sid: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(sid)) out.push(e)
  return out
}

describe.each(STORE_KINDS)('compaction and tool-call pairs (%s)', (kind) => {
  let opened: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store: opened } = t))
  const store = (): PostgresStore => opened

  it('regression (unpaired tool calls, HTTP 400): a compaction covering the call but not its result is refused; the list stays sendable', async () => {
    // given the domain brief's README turn, then the reply
    const sid = await store().createSession()
    const [q, c, r, a] = [user("What's in README.md?"), call('call_01'), result('call_01'), assistant('It is acme.')]
    await store().append(sid, [q, c, r, a])
    const summary = user('[CONTEXT COMPACTION] the user asked about README.md')

    // when: the runtime summarises the question and the call, keeping the tool result
    let caught: unknown
    try {
      await store().compact(sid, { covered: [q.id, c.id], summary })
    } catch (error) {
      caught = error
    }

    // then: refused, nothing written, no finding; the wire view of the live list needs no repair
    expect(isTurnlogError(caught, 'INVALID_INPUT')).toBe(true)
    expect((caught as { details: Record<string, unknown> }).details).toMatchObject({
      reason: 'splits_tool_pair',
      toolCallId: 'call_01',
      messageIds: [r.id],
      coveredMessageIds: [c.id],
    })
    expect(await eventsOf(store(), sid)).toHaveLength(4)
    const loaded = await store().load(sid)
    expect(loaded.pairing.ok).toBe(true)
    expect(toWire(loaded.messages)).toEqual([q.payload, c.payload, r.payload, a.payload])
    expect((await audit(store(), sid)).findings.filter((f) => f.kind.includes('tool'))).toEqual([])
  })

  it('sync records a compaction that split a pair as the runtime did it (a mirror); the audit reports the orphan', async () => {
    // given a runtime whose own compaction summarised the call but kept its result
    const sid = await store().createSession()
    const [q, c, r] = [user('read it'), call('call_02'), result('call_02')]
    await store().append(sid, [q, c, r])
    const summary = user('[CONTEXT COMPACTION] read a file')

    // when: sync records the runtime's list
    const synced = await store().sync(sid, [summary, r], { compaction: { summaryIds: [summary.id] } })

    // then: recorded as one compaction (data.sync), the orphan live, reported by the audit
    expect(synced.compacted).toEqual([{ summary: [summary.id], covered: [q.id, c.id] }])
    const loaded = await store().load(sid)
    expect(loaded.messages.map((m) => m.id)).toEqual([summary.id, r.id])
    expect(loaded.pairing.orphans).toEqual([{ messageId: r.id, toolCallId: 'call_02' }])
    const findings = (await audit(store(), sid)).findings.filter((f) => f.kind === 'orphan_tool_result')
    expect(findings.map((f) => f.messageIds)).toEqual([[r.id]])
  })

  it('an export holding a split compaction (allowSplitToolPairs) imports again into a fresh store, chain and findings intact', async () => {
    // given a session whose compaction split a pair, recorded as an importer records it
    const sid = await store().createSession()
    const [q, c, r] = [user('read it'), call('call_03'), result('call_03')]
    await store().append(sid, [q, c, r])
    await store().compact(sid, { covered: [q.id, c.id], summary: user('[CONTEXT COMPACTION] s'), allowSplitToolPairs: true })
    const lines: string[] = []
    for await (const line of exportSessions(store(), { sessionIds: [sid] })) lines.push(line)

    // when: importEvents replays it into an empty store
    const fresh = await openStore({ embedded: true })
    try {
      const imported = await importEvents(fresh, lines)

      // then: the same log, the same live list and the same finding
      expect(imported.sessions).toBe(1)
      expect(await eventsOf(fresh, sid)).toEqual(await eventsOf(store(), sid))
      expect((await verifyChain(fresh, sid)).breaks).toEqual([])
      expect((await fresh.load(sid)).pairing.orphans).toEqual([{ messageId: r.id, toolCallId: 'call_03' }])
      expect((await audit(fresh, sid)).findings.filter((f) => f.kind === 'orphan_tool_result').map((f) => f.messageIds)).toEqual([[r.id]])
    } finally {
      await fresh.close()
    }
  })
})
