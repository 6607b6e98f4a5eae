import { describe, expect, it } from '@jest/globals'
import { foldSession, messageIdFromExternal, newEventId, newSessionId, type MessageId, type StoredEvent } from '@turnlog/core'
import {
  HermesWarnings,
  epochToIso,
  hermesRowMessage,
  planHermesSession,
  type HermesPlanStep,
  type HermesRowMessage,
  type SqliteValue,
} from '@turnlog/hermes'

type Row = { id: number; role: string; content?: string | null; active?: number; compacted?: number; [k: string]: SqliteValue | undefined }

const SID = 'sess-1'
let clock = 1_760_000_000

function rowsOf(defs: readonly Row[], warnings = new HermesWarnings()): HermesRowMessage[] {
  return defs.flatMap((d) => {
    const columns: Record<string, SqliteValue> = { timestamp: (clock += 1), active: 1, compacted: 0 }
    for (const [k, v] of Object.entries(d)) if (v !== undefined) columns[k] = v
    const built = hermesRowMessage(SID, { rowId: d.id, sessionId: SID, columns }, { fallbackEpochSeconds: 0, warnings })
    return built ? [built] : []
  })
}

const idOf = (rowId: number): MessageId => messageIdFromExternal(`${'hermes'}:${SID}:${rowId}`)

/** Replays a plan's steps as events and folds them: the live list the store would hold (ids). */
function replay(steps: readonly HermesPlanStep[]): MessageId[] {
  const sessionId = newSessionId()
  const events: StoredEvent[] = []
  const base = (): {
    sessionId: typeof sessionId
    seq: number
    eventId: ReturnType<typeof newEventId>
    recordedAt: string
    hash: string
  } => ({ sessionId, seq: events.length + 1, eventId: newEventId(), recordedAt: '2026-01-01T00:00:00.000Z', hash: '' })
  for (const step of steps) {
    if (step.kind === 'append') {
      for (const m of step.messages)
        events.push({
          ...base(),
          type: 'message_appended',
          messageId: m.id,
          contentHash: 'x' as never,
          payload: m.payload,
          data: { createdAt: m.createdAt },
        })
    } else if (step.kind === 'revise') {
      events.push({
        ...base(),
        type: 'message_revised',
        messageId: step.messageId,
        contentHash: step.hash as never,
        payload: step.payload,
        data: { createdAt: '2026-01-01T00:00:00.000Z', revision: step.revision },
      })
    } else if (step.kind === 'rewind') {
      events.push({
        ...base(),
        type: 'messages_retracted',
        messageId: null,
        contentHash: null,
        payload: null,
        data: { ids: step.ids, target: { from: step.from } },
      })
    } else {
      for (const m of step.summary)
        events.push({
          ...base(),
          type: 'message_appended',
          messageId: m.id,
          contentHash: 'x' as never,
          payload: m.payload,
          data: { createdAt: m.createdAt, deferred: true },
        })
      events.push({
        ...base(),
        type: 'messages_compacted',
        messageId: null,
        contentHash: null,
        payload: null,
        data: { covered: step.covered.map((id) => ({ id, contentHash: '' })), summary: step.summary.map((m) => m.id) },
      })
    }
  }
  const state = foldSession(events)
  expect(state.anomalies).toEqual([])
  return [...state.live]
}

describe('hermesRowMessage', () => {
  it('builds the provider message hermes would rebuild, and keeps every other column under hermes', () => {
    // given
    const warnings = new HermesWarnings()
    const calls = [{ id: 'call_01', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }]
    // when
    const [assistant, tool, parts] = rowsOf(
      [
        {
          id: 7,
          role: 'assistant',
          content: '',
          tool_calls: JSON.stringify(calls),
          finish_reason: 'tool_calls',
          reasoning_content: 'think',
          reasoning_details: '[{"type":"reasoning.text","text":"t"}]',
          token_count: 42,
          platform_message_id: 'tg:9',
          observed: 0,
          api_content: 'raw',
        },
        { id: 8, role: 'tool', content: '{"ok":true}', tool_call_id: 'call_01', tool_name: 'read_file' },
        { id: 9, role: 'user', content: '\u0001json:[{"type":"text","text":"look"},{"type":"image_url","image_url":{"url":"data:x"}}]' },
      ],
      warnings,
    )

    // then
    expect(assistant?.message.id).toBe(idOf(7))
    expect(assistant?.message.externalId).toBe(`hermes:${SID}:7`)
    expect(assistant?.message.payload).toEqual({
      role: 'assistant',
      content: '',
      tool_calls: calls,
      finish_reason: 'tool_calls',
      reasoning_content: 'think',
      reasoning_details: [{ type: 'reasoning.text', text: 't' }],
      hermes: { token_count: 42, platform_message_id: 'tg:9', api_content: 'raw' },
    })
    expect(tool?.message.payload).toEqual({ role: 'tool', content: '{"ok":true}', tool_call_id: 'call_01', name: 'read_file' })
    expect(parts?.message.payload.content).toEqual([
      { type: 'text', text: 'look' },
      { type: 'image_url', image_url: { url: 'data:x' } },
    ])
    expect(warnings.toArray()).toEqual([])
  })

  it('salvages what does not fit and reports it, never dropping the value', () => {
    // given
    const warnings = new HermesWarnings()
    // when
    const built = rowsOf(
      [
        { id: 1, role: 'session_meta', content: '{}' },
        { id: 2, role: 'assistant', content: 'x', tool_calls: '[{"function":{"name":"f","arguments":"{}"}}]' },
        { id: 3, role: 'tool', content: null },
        { id: 4, role: 'user', content: 'late', timestamp: null },
      ],
      warnings,
    )

    // then
    expect(built.map((r) => r.rowId)).toEqual([2, 3, 4])
    expect(built[0]?.message.payload).toEqual({
      role: 'assistant',
      content: 'x',
      hermes: { tool_calls: '[{"function":{"name":"f","arguments":"{}"}}]' },
    })
    expect(built[1]?.message.payload).toEqual({ role: 'tool', content: '', tool_call_id: 'hermes:missing:3' })
    expect(built[2]?.message.createdAt).toBe('1970-01-01T00:00:00.000000Z')
    expect(warnings.toArray().map((w) => [w.code, w.rowIds])).toEqual([
      ['unsupported_role', [1]],
      ['invalid_tool_calls', [2]],
      ['null_content', [3]],
      ['missing_tool_call_id', [3]],
      ['bad_timestamp', [4]],
    ])
  })

  it('turns REAL epoch seconds into ISO-8601 with microseconds', () => {
    expect(epochToIso(1_760_000_000.123456)).toBe('2025-10-09T08:53:20.123456Z')
    expect(epochToIso(1_760_000_000_123)).toBe('2025-10-09T08:53:20.123000Z')
    expect(epochToIso(Number.NaN)).toBeNull()
  })
})

describe('planHermesSession', () => {
  it('keeps re-inserted head and tail rows as the messages they copy and covers exactly the rest', () => {
    // given: 1..6 archived by the compaction at 9; 7,8 copy the head (1,2), 10,11 the tail (5,6)
    const rows = rowsOf([
      { id: 1, role: 'user', content: 'u1', compacted: 1, active: 0, token_count: 3 },
      { id: 2, role: 'assistant', content: 'a1', compacted: 1, active: 0 },
      { id: 3, role: 'user', content: 'u2', compacted: 1, active: 0 },
      { id: 4, role: 'assistant', content: 'a2', compacted: 1, active: 0 },
      { id: 5, role: 'user', content: 'u3', compacted: 1, active: 0 },
      { id: 6, role: 'assistant', content: 'a3', compacted: 1, active: 0 },
      { id: 7, role: 'user', content: 'u1' },
      { id: 8, role: 'assistant', content: 'a1' },
      { id: 9, role: 'user', content: '[CONTEXT COMPACTION] u2/a2 summarised' },
      { id: 10, role: 'user', content: 'u3' },
      { id: 11, role: 'assistant', content: 'a3' },
      { id: 12, role: 'user', content: 'u4' },
    ])

    // when
    const plan = planHermesSession(rows)

    // then
    expect(plan.matches).toBe(true)
    expect(plan.keptCopies).toBe(4)
    expect(plan.target.map((t) => t.id)).toEqual([idOf(1), idOf(2), idOf(9), idOf(5), idOf(6), idOf(12)])
    const compact = plan.steps.find((s) => s.kind === 'compact')
    expect(compact?.kind === 'compact' && compact.covered).toEqual([idOf(3), idOf(4)])
    // row 7 lost token_count on re-insert (hermes reloads without it): a revision, not a new message
    expect(plan.steps.filter((s) => s.kind === 'revise').map((s) => s.kind === 'revise' && s.rowId)).toEqual([7])
    expect(replay(plan.steps)).toEqual(plan.live.map((l) => l.id))
    expect(plan.issues).toEqual([])
  })

  it('without copy mapping still reproduces the live view, with the head re-inserts placed with the summary', () => {
    // given
    const rows = rowsOf([
      { id: 1, role: 'user', content: 'u1', compacted: 1, active: 0 },
      { id: 2, role: 'user', content: 'u2', compacted: 1, active: 0 },
      { id: 3, role: 'assistant', content: 'a2', compacted: 1, active: 0 },
      { id: 4, role: 'user', content: 'u1' },
      { id: 5, role: 'user', content: '[CONTEXT COMPACTION] s' },
      { id: 6, role: 'assistant', content: 'a2' },
    ])

    // when
    const plan = planHermesSession(rows, { mapCopies: false })

    // then
    expect(plan.matches).toBe(true)
    expect(plan.keptCopies).toBe(0)
    expect(plan.live.map((l) => l.id)).toEqual([idOf(4), idOf(5), idOf(6)])
    expect(replay(plan.steps)).toEqual([idOf(4), idOf(5), idOf(6)])
  })

  it('retracts rewound rows as a tail before the next row, and keeps rows a /retry re-inserted', () => {
    // given: 3,4 undone; 5,6 new; /retry archived 1,2,5,6 as rewound and re-inserted 1,2,5 as 7,8,9; then 10
    const rows = rowsOf([
      { id: 1, role: 'user', content: 'u1', active: 0 },
      { id: 2, role: 'assistant', content: 'a1', active: 0 },
      { id: 3, role: 'user', content: 'u2', active: 0 },
      { id: 4, role: 'assistant', content: 'bad', active: 0 },
      { id: 5, role: 'user', content: 'u2 again', active: 0 },
      { id: 6, role: 'assistant', content: 'bad again', active: 0 },
      { id: 7, role: 'user', content: 'u1' },
      { id: 8, role: 'assistant', content: 'a1' },
      { id: 9, role: 'user', content: 'u2 again' },
      { id: 10, role: 'assistant', content: 'good' },
    ])

    // when
    const plan = planHermesSession(rows)

    // then
    expect(plan.matches).toBe(true)
    expect(plan.live.map((l) => l.id)).toEqual([idOf(1), idOf(2), idOf(5), idOf(10)])
    expect(plan.steps.filter((s) => s.kind === 'rewind').map((s) => s.kind === 'rewind' && s.rowIds)).toEqual([[3, 4], [6]])
    expect(replay(plan.steps)).toEqual(plan.live.map((l) => l.id))
  })

  it('treats an old summary kept by a later compaction as a copy, and keeps live duplicates apart (#92231)', () => {
    // given: compaction 1 at 3 kept a1 (4); the bug re-inserted 3,4 as 5,6; compaction 2 at 8 kept 3 (as 9) and 6 (as 10)
    const rows = rowsOf([
      { id: 1, role: 'user', content: 'u1', compacted: 1, active: 0 },
      { id: 2, role: 'assistant', content: 'a1', compacted: 1, active: 0 },
      { id: 3, role: 'user', content: '[CONTEXT COMPACTION] one', compacted: 1, active: 0 },
      { id: 4, role: 'assistant', content: 'a1', compacted: 1, active: 0 },
      { id: 5, role: 'user', content: '[CONTEXT COMPACTION] one', compacted: 1, active: 0 },
      { id: 6, role: 'assistant', content: 'a1', compacted: 1, active: 0 },
      { id: 7, role: 'user', content: '[CONTEXT COMPACTION] one' },
      { id: 8, role: 'user', content: '[CONTEXT COMPACTION] two' },
      { id: 9, role: 'assistant', content: 'a1' },
      { id: 10, role: 'assistant', content: 'a1' },
    ])

    // when
    const plan = planHermesSession(rows)

    // then: hermes' active rows 7,8,9,10: a kept copy of summary one, summary two, and a1 twice (a live duplicate)
    expect(plan.matches).toBe(true)
    expect(plan.compactions).toBe(2)
    expect(plan.target.map((t) => t.rowId)).toEqual([7, 8, 9, 10])
    expect(new Set(plan.live.map((l) => l.id)).size).toBe(4)
    expect(replay(plan.steps)).toEqual(plan.live.map((l) => l.id))
  })

  it('reports compacted rows no summary follows, and timestamps that go back', () => {
    // given
    const rows = rowsOf([
      { id: 1, role: 'user', content: 'u1', timestamp: 100 },
      { id: 2, role: 'assistant', content: 'a1', timestamp: 90 },
      { id: 3, role: 'user', content: 'u2', timestamp: 110, compacted: 1, active: 0 },
    ])

    // when
    const plan = planHermesSession(rows)

    // then
    expect(plan.matches).toBe(true)
    expect(plan.timestampRegressions).toEqual([2])
    expect(plan.issues.map((i) => [i.code, i.rowIds])).toEqual([['compacted_without_summary', [3]]])
  })
})
