import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { contentHash, createMessage, newEventId, projectStructure, type ChatMessage, type SessionId, type StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { openTestStore, type OpenedTestStore } from '@turnlog/testing'
import { exportSessions, importEvents } from '@turnlog/audit'
import { sql } from 'kysely'

// importEvents writes a file's events in one INSERT statement per batch, so the projection's statement
// trigger sees them together. The SQL projection must still equal projectStructure (the written spec)
// for every log the spec applies without an anomaly. Two embedded stores: the file is made on one, read
// into the other.
let source: PostgresStore
let target: PostgresStore
const opened: OpenedTestStore[] = []

beforeAll(async () => {
  for (let i = 0; i < 2; i++) opened.push(await openTestStore('pglite'))
  ;[source, target] = opened.map((o) => o.store) as [PostgresStore, PostgresStore]
})

afterAll(async () => {
  for (const o of [...opened].reverse()) await o.close()
})

/** Writes `events` straight into the source's log, one statement each (the source's own projection stays right). */
async function writeAround(
  sid: SessionId,
  events: readonly { type: string; messageId: string | null; payload: ChatMessage | null; data: object }[],
): Promise<void> {
  for (const [i, e] of events.entries()) {
    await sql`insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
      values (${sid}::uuid, ${i + 1}, ${newEventId()}::uuid, ${e.type}, ${e.messageId}::uuid,
              decode(${e.payload === null ? null : contentHash(e.payload)}::text, 'hex'), ${e.payload === null ? null : JSON.stringify(e.payload)}::json, ${JSON.stringify(e.data)}::json)`.execute(
      source.db,
    )
  }
  await sql`update turnlog.sessions set version = ${events.length} where session_id = ${sid}`.execute(source.db)
}

async function rowsOf(store: PostgresStore, sid: SessionId): Promise<{ messageId: string; eventSeq: number; partial: boolean }[]> {
  const { rows } = await sql<{ message_id: string; event_seq: string | number; partial: boolean }>`
    select message_id::text, event_seq, partial from turnlog.live_messages where session_id = ${sid} order by position`.execute(store.db)
  return rows.map((r) => ({ messageId: r.message_id, eventSeq: Number(r.event_seq), partial: r.partial }))
}

describe('importEvents and the SQL projection', () => {
  // regression: the statement trigger once placed the summary after the append (docs/architecture.md)
  it('a file whose compaction covers nothing live, then an append, imports with the rows the spec gives; rebuild finds no drift', async () => {
    // given: a chain-valid file (made by a store) with that history
    const sid = await source.createSession()
    const summary = createMessage({ role: 'assistant', content: 'summary' })
    const later = createMessage({ role: 'user', content: 'later' })
    await writeAround(sid, [
      { type: 'message_appended', messageId: summary.id, payload: summary.payload, data: { createdAt: summary.createdAt, deferred: true } },
      { type: 'messages_compacted', messageId: null, payload: null, data: { covered: [], summary: [summary.id] } },
      { type: 'message_appended', messageId: later.id, payload: later.payload, data: { createdAt: later.createdAt } },
    ])
    const lines: string[] = []
    for await (const line of exportSessions(source, { sessionIds: [sid] })) lines.push(line)

    // when
    await importEvents(target, lines)

    // then: the source (one statement per event) and the import (one statement) both hold the spec's rows
    const events: StoredEvent[] = []
    for await (const e of target.events(sid)) events.push(e)
    const spec = projectStructure(events).rows
    expect(spec.map((r) => r.messageId)).toEqual([summary.id, later.id])
    expect(await rowsOf(source, sid)).toEqual(spec)
    expect(await rowsOf(target, sid)).toEqual(spec)
    // and rebuild (event by event) finds nothing to repair
    expect((await target.rebuild({ sessionId: sid, verify: true })).drift).toEqual([])
  })
})
