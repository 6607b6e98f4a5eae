import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { canonicalJson, messageIdFromExternal, type Message } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { audit } from '@turnlog/audit'
import { epochToIso, hermesSessionId, importHermes, type HermesImportResult } from '@turnlog/hermes'
import { HermesFixture, expectedCore, importedCore } from './hermes-fixture.js'

let dir: string, statePath: string, oldPath: string
let database: TestDatabase
let store: PostgresStore
let first: HermesImportResult
let fixture: HermesFixture
let snapshots: string[]
const shapes: Record<string, number> = {}

const call = (id: string, name: string, args: unknown): unknown => ({
  id,
  type: 'function',
  function: { name, arguments: JSON.stringify(args) },
})
const multiplicity = (messages: readonly Message[], content: string): number => messages.filter((m) => m.payload.content === content).length
const sessionResult = (result: HermesImportResult, hermesId: string): HermesImportResult['sessions'][number] => {
  const found = result.sessions.find((s) => s.hermesSessionId === hermesId)
  if (!found) throw new Error(`no result for ${hermesId}`)
  return found
}

/**
 * A realistic state.db: tools, compactions with re-inserted kept rows, rewinds, /retry, #92231, a chain.
 * `snapshots` are copies taken while hermes was still writing (for the incremental import).
 */
function buildStateDb(path: string, snapshots: readonly string[]): HermesFixture {
  const f = new HermesFixture(path)

  // tools: a read_file round trip with reasoning, a clock that went back, a call the crash left unanswered
  f.session('s-tools', { title: 'README' })
  f.add('s-tools', { role: 'user', content: "What's in README.md?", token_count: 9, platform_message_id: 'tg:1001' })
  const callRow = f.add('s-tools', {
    role: 'assistant',
    content: '',
    tool_calls: [call('call_01', 'read_file', { path: 'README.md' })],
    finish_reason: 'tool_calls',
    reasoning_content: 'I should read it.',
    reasoning_details: [{ type: 'reasoning.text', text: 'read it' }],
    token_count: 31,
  })
  const callTs = f.rows('s-tools').find((r) => r.id === callRow)?.timestamp ?? 0
  f.add('s-tools', {
    role: 'tool',
    tool_call_id: 'call_01',
    tool_name: 'read_file',
    content: '{"ok":true,"text":"# acme\\u0000"}',
    timestamp: callTs - 7.5,
  })
  f.add('s-tools', { role: 'assistant', content: 'It says "# acme" 😀', finish_reason: 'stop' })
  f.add('s-tools', {
    role: 'user',
    content: '\u0001json:[{"type":"text","text":"and this?"},{"type":"image_url","image_url":{"url":"https://x/y.png"}}]',
  })
  f.add('s-tools', { role: 'assistant', content: null, tool_calls: [call('call_02', 'run_tests', {})], finish_reason: 'tool_calls' })
  f.add('s-tools', { role: 'session_meta', content: '{"model":"qwen3-max"}' })

  // compactions: hermes archives everything and re-inserts head + summary + tail; the second splits a tool pair
  f.session('s-compact')
  f.add('s-compact', { role: 'user', content: 'Plan the release.' })
  f.add('s-compact', { role: 'assistant', content: 'Sure: three steps.', token_count: 40 })
  f.add('s-compact', { role: 'user', content: 'Step one?' })
  f.add('s-compact', { role: 'assistant', content: '', tool_calls: [call('call_10', 'git_log', { n: 5 })] })
  f.add('s-compact', { role: 'tool', tool_call_id: 'call_10', tool_name: 'git_log', content: 'abc123 fix' })
  f.add('s-compact', { role: 'assistant', content: 'Tag abc123.' })
  f.add('s-compact', { role: 'user', content: 'Step two?' })
  f.add('s-compact', { role: 'assistant', content: 'Write the changelog.' })
  f.compact('s-compact', { keepHead: 2, keepTail: 2, summary: 'Steps one and two discussed; abc123 tagged.' })
  f.add('s-compact', { role: 'user', content: 'Step three?' })
  f.db.exec(`VACUUM INTO '${snapshots[0] ?? ''}'`)
  f.add('s-compact', { role: 'assistant', content: '', tool_calls: [call('call_20', 'publish', { tag: 'abc123' })] })
  f.add('s-compact', { role: 'tool', tool_call_id: 'call_20', tool_name: 'publish', content: 'published' })
  f.add('s-compact', { role: 'assistant', content: 'Released.' })
  f.compact('s-compact', { keepHead: 2, keepTail: 2, summary: 'Release published.' })
  f.add('s-compact', { role: 'user', content: 'Thanks!' })

  // #92231: the "already written" marker was missing on reloaded messages, so every compaction's
  // result was flushed again as new active rows: live copies multiply
  f.session('s-dup')
  f.add('s-dup', { role: 'user', content: 'u1' })
  f.add('s-dup', { role: 'assistant', content: 'a1' })
  f.add('s-dup', { role: 'user', content: 'u2' })
  f.add('s-dup', { role: 'assistant', content: 'a2' })
  f.compact('s-dup', { keepTail: 3, summary: 'u1 asked.' })
  f.reinsertLive('s-dup')
  shapes['dupAfterFirst'] = f.activeRows('s-dup').filter((r) => r.content === 'u2').length
  f.add('s-dup', { role: 'user', content: 'u3' })
  f.add('s-dup', { role: 'assistant', content: 'a3' })
  f.compact('s-dup', { keepTail: 9, summary: 'first summary folded.' })
  f.reinsertLive('s-dup')
  shapes['dupAfterSecond'] = f.activeRows('s-dup').filter((r) => r.content === 'u2').length

  // rewinds: /undo of a failed attempt, then /retry (archive all as rewound, re-insert the kept prefix);
  // then a reply that was never written (two user messages in a row)
  f.session('s-rewind')
  f.add('s-rewind', { role: 'user', content: 'Summarise the doc.' })
  const a1 = f.add('s-rewind', { role: 'assistant', content: 'Which doc?' })
  f.add('s-rewind', { role: 'user', content: 'the spec' })
  f.add('s-rewind', { role: 'assistant', content: '(empty)' })
  f.rewindAfter('s-rewind', a1)
  f.add('s-rewind', { role: 'user', content: 'The spec, please.' })
  f.add('s-rewind', { role: 'assistant', content: 'A bad summary.' })
  f.db.exec(`VACUUM INTO '${snapshots[1] ?? ''}'`)
  f.retry('s-rewind', 3)
  f.add('s-rewind', { role: 'assistant', content: 'A good summary.' })
  f.add('s-rewind', { role: 'user', content: 'Great. Now translate it.' })
  f.add('s-rewind', { role: 'user', content: 'Hello? Are you there?' })

  // a compression split: the parent ends, the child starts with the summary and the kept tail
  f.session('s-parent', { endReason: 'compression' })
  f.add('s-parent', { role: 'user', content: 'Long task' })
  f.add('s-parent', { role: 'assistant', content: 'Working on it' })
  f.add('s-parent', { role: 'user', content: 'Keep going' })
  f.add('s-parent', { role: 'assistant', content: 'Half done' })
  f.session('s-child', { parent: 's-parent' })
  f.add('s-child', { role: 'user', content: '[CONTEXT COMPACTION] Long task, half done.' }, { summary: true })
  f.add('s-child', { role: 'user', content: 'Keep going' })
  f.add('s-child', { role: 'assistant', content: 'Half done' })
  f.add('s-child', { role: 'assistant', content: 'All done' })
  return f
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-'))
  statePath = join(dir, 'state.db')
  snapshots = [join(dir, 'snapshot-1.db'), join(dir, 'snapshot-2.db')]
  fixture = buildStateDb(statePath, snapshots)
  oldPath = join(dir, 'old-state.db')
  const old = new HermesFixture(oldPath, { old: true })
  old.session('old-1')
  old.add('old-1', { role: 'user', content: 'hi' })
  old.add('old-1', { role: 'assistant', content: 'hello', timestamp: null })
  const kept = old.add('old-1', { role: 'user', content: 'bye' })
  old.add('old-1', { role: 'assistant', content: 'wait' })
  old.rewindAfter('old-1', kept)
  old.add('orphan-7', { role: 'user', content: 'no session row' })
  old.close()

  database = await createTestDatabase()
  store = await openStore({ connectionString: database.connectionString })
  first = await importHermes(store, statePath, { tenantId: 'acme' })
})

afterAll(async () => {
  fixture.close()
  await store.close()
  await database.drop()
  await rm(dir, { recursive: true, force: true })
})

describe('importHermes', () => {
  it("makes every session's live view equal hermes' active rows, in row order", async () => {
    // given
    const ids = ['s-tools', 's-compact', 's-dup', 's-rewind', 's-parent', 's-child']
    expect(first.sessions.map((s) => s.hermesSessionId)).toEqual(ids)
    for (const hermesId of ids) {
      // when
      const loaded = await store.load(hermesSessionId(hermesId))
      const expected = fixture
        .activeRows(hermesId)
        .filter((r) => r.role !== 'session_meta')
        .map(expectedCore)

      // then
      expect({ hermesId, live: loaded.messages.map((m) => importedCore(m.payload)) }).toEqual({ hermesId, live: expected })
      expect(sessionResult(first, hermesId).liveMatches).toBe(true)
    }
    expect(first.warnings.filter((w) => w.code === 'live_view_mismatch' || w.code === 'copy_mapping_fallback')).toEqual([])
    expect((await store.rebuild({ verify: true })).drift).toEqual([])
  })

  it('maps ids, payload fields and timestamps deterministically and keeps every column', async () => {
    // given
    const rows = fixture.rows('s-tools')
    const loaded = await store.load(hermesSessionId('s-tools'))
    const [question, assistant, tool, , parts] = loaded.messages

    // then: ids from the row ids, createdAt from the REAL timestamps (microseconds kept)
    expect(loaded.messages.map((m) => m.id)).toEqual(rows.slice(0, 6).map((r) => messageIdFromExternal(`hermes:s-tools:${r.id}`)))
    expect(loaded.messages.map((m) => m.createdAt)).toEqual(rows.slice(0, 6).map((r) => epochToIso(r.timestamp ?? 0)))
    expect(question?.externalId).toBe(`hermes:s-tools:${rows[0]?.id}`)
    expect(question?.payload).toEqual({
      role: 'user',
      content: "What's in README.md?",
      hermes: { token_count: 9, platform_message_id: 'tg:1001' },
    })
    expect(assistant?.payload).toMatchObject({
      finish_reason: 'tool_calls',
      reasoning_content: 'I should read it.',
      reasoning_details: [{ type: 'reasoning.text', text: 'read it' }],
      hermes: { token_count: 31 },
    })
    expect(tool?.payload).toEqual({
      role: 'tool',
      content: '{"ok":true,"text":"# acme\\u0000"}',
      tool_call_id: 'call_01',
      name: 'read_file',
    })
    expect(parts?.payload.content).toEqual([
      { type: 'text', text: 'and this?' },
      { type: 'image_url', image_url: { url: 'https://x/y.png' } },
    ])
    // the session row is kept in the metadata
    const info = await store.getSession(hermesSessionId('s-tools'))
    expect(info.tenantId).toBe('acme')
    expect(info.metadata).toMatchObject({
      source: 'hermes',
      hermes: { sessionId: 's-tools', columns: { title: 'README', model: 'qwen3-max', system_prompt: 'You are Hermes.' }, lineage: null },
    })
    expect(first.warnings).toContainEqual(
      expect.objectContaining({ code: 'unsupported_role', hermesSessionId: 's-tools', rowIds: [rows[6]?.id] }),
    )
  })

  it('keeps re-inserted kept rows as the same messages and compacts exactly what hermes summarised', async () => {
    // given
    const rows = fixture.rows('s-compact')
    const result = sessionResult(first, 's-compact')

    // when
    const transcript = await store.transcript(hermesSessionId('s-compact'))
    const compactions = transcript.events.filter((e) => e.type === 'messages_compacted')

    // then: two compactions; the kept head ("Plan the release." / "Sure: three steps.") keeps its first row's id
    expect(result.compactions).toBe(2)
    expect(result.keptCopies).toBe(8)
    const loaded = await store.load(hermesSessionId('s-compact'))
    expect(loaded.messages[0]?.id).toBe(messageIdFromExternal(`hermes:s-compact:${rows[0]?.id}`))
    expect(loaded.messages[1]?.id).toBe(messageIdFromExternal(`hermes:s-compact:${rows[1]?.id}`))
    // the re-insert dropped token_count: a revision of the same message, the original content kept in history
    expect(loaded.messages[1]?.payload).toEqual({ role: 'assistant', content: 'Sure: three steps.' })
    expect(transcript.entries.filter((e) => e.message.id === loaded.messages[1]?.id).map((e) => e.status)).toEqual([
      'superseded-revision',
      'live',
    ])
    // each compaction names the rows it covered; the first covered the middle six rows
    const firstCovered = compactions[0]?.type === 'messages_compacted' ? compactions[0].data.covered.map((c) => c.id) : []
    expect(firstCovered).toEqual(rows.slice(2, 6).map((r) => messageIdFromExternal(`hermes:s-compact:${r.id}`)))
    expect(compactions[0]?.type === 'messages_compacted' && compactions[0].data.metadata).toMatchObject({
      hermes: { summaryRowId: rows[10]?.id },
    })
    // no message is live twice: the copies did not become duplicates
    expect(new Set(loaded.messages.map((m) => canonicalJson(m.payload))).size).toBe(loaded.messages.length)
  })

  it('shows the hermes incident signatures to the audit', async () => {
    // when
    const report = await audit(store, { all: true })
    const kinds = (hermesId: string): string[] =>
      report.findings.filter((f) => f.sessionId === hermesSessionId(hermesId)).map((f) => f.kind)

    // then: #92231, live copies multiply across compactions: 2, then 4 live copies of "u2"
    expect([shapes['dupAfterFirst'], shapes['dupAfterSecond']]).toEqual([2, 4])
    const dup = await store.load(hermesSessionId('s-dup'))
    expect(multiplicity(dup.messages, 'u2')).toBe(4)
    expect(kinds('s-dup')).toContain('live_duplicate_copy')
    // the crash left call_02 unanswered; the second compaction split call_20 from its result
    expect(kinds('s-tools')).toContain('unanswered_tool_call')
    expect(kinds('s-compact')).toContain('orphan_tool_result')
    // a reply never written: two user messages in a row
    expect(kinds('s-rewind')).toContain('consecutive_user_messages')
    // nothing else is wrong with the logs themselves
    expect(report.findings.filter((f) => f.severity === 'critical')).toEqual([])
    // the clock went back between the call and its result: reported by the importer, visible as createdAt
    const toolRows = fixture.rows('s-tools')
    expect(first.warnings).toContainEqual(
      expect.objectContaining({ code: 'timestamp_regression', hermesSessionId: 's-tools', rowIds: [toolRows[2]?.id] }),
    )
    const tools = await store.load(hermesSessionId('s-tools'))
    expect((tools.messages[2]?.createdAt ?? '') < (tools.messages[1]?.createdAt ?? '')).toBe(true)
    // and the audit reports it as a finding (regression: the importer's warning said so, no finding did)
    const clock = report.findings.filter((f) => f.kind === 'clock_regression')
    expect(clock.find((f) => f.sessionId === hermesSessionId('s-tools'))).toMatchObject({
      severity: 'warning',
      evidence: { message: { messageId: messageIdFromExternal(`hermes:s-tools:${String(toolRows[2]?.id)}`) } },
    })
    // exactly the sessions the importer warned about
    const warned = first.warnings.filter((w) => w.code === 'timestamp_regression').map((w) => hermesSessionId(w.hermesSessionId ?? ''))
    expect([...new Set(clock.map((f) => f.sessionId))].sort()).toEqual([...new Set(warned)].sort())
  })

  it('retracts rewound rows and keeps what /retry re-inserted', async () => {
    // given
    const rows = fixture.rows('s-rewind')
    const result = sessionResult(first, 's-rewind')

    // when
    const transcript = await store.transcript(hermesSessionId('s-rewind'))

    // then: the first three rows survive /retry under their own ids; the undone attempt and the bad summary are retracted
    const statusOf = (rowId: number | undefined): string | undefined =>
      transcript.entries.find((e) => e.message.id === messageIdFromExternal(`hermes:s-rewind:${String(rowId)}`))?.status
    expect(rows.slice(0, 7).map((r) => statusOf(r.id))).toEqual(['live', 'live', 'retracted', 'retracted', 'live', 'retracted', undefined])
    expect(result.keptCopies).toBe(3)
    expect(result.rewinds).toBe(2)
  })

  it('records a compression chain as lineage in the metadata', async () => {
    // when
    const child = await store.getSession(hermesSessionId('s-child'))

    // then
    expect(child.metadata).toMatchObject({
      hermes: { lineage: { parentHermesSessionId: 's-parent', parentSessionId: hermesSessionId('s-parent'), relation: 'compression' } },
    })
    expect(sessionResult(first, 's-child').parentSessionId).toBe(hermesSessionId('s-parent'))
    expect(child.parent).toBeNull()
  })

  it('is a no-op when the same file is imported again', async () => {
    // given
    const before = await Promise.all(first.sessionIds.map((id) => store.getSession(id)))

    // when
    const again = await importHermes(store, statePath, { tenantId: 'acme' })

    // then
    expect(again.eventsWritten).toBe(0)
    expect(again.sessions.map((s) => [s.appended, s.revised, s.rewinds, s.compactions, s.liveMatches])).toEqual(
      first.sessions.map(() => [0, 0, 0, 0, true]),
    )
    const after = await Promise.all(first.sessionIds.map((id) => store.getSession(id)))
    expect(after.map((s) => s.version)).toEqual(before.map((s) => s.version))
  })

  it('imports incrementally while hermes keeps writing: the end state equals a one-shot import', async () => {
    // given: a fresh database that saw the file twice mid-way
    const other = await createTestDatabase()
    const incremental = await openStore({ connectionString: other.connectionString })
    try {
      // when
      const steps = [
        await importHermes(incremental, snapshots[0] ?? ''),
        await importHermes(incremental, snapshots[1] ?? ''),
        await importHermes(incremental, statePath),
      ]

      // then: each import matched hermes' state at that time, and the end state is the one-shot import's
      for (const result of steps) expect(result.sessions.filter((s) => !s.liveMatches).map((s) => s.hermesSessionId)).toEqual([])
      for (const id of first.sessionIds) {
        const [a, b] = await Promise.all([incremental.load(id), store.load(id)])
        expect(a.messages.map((m) => [m.id, m.payload])).toEqual(b.messages.map((m) => [m.id, m.payload]))
      }
      expect((await incremental.rebuild({ verify: true })).drift).toEqual([])
    } finally {
      await incremental.close()
      await other.drop()
    }
  })

  it('reads an old-version file defensively and reports what is missing', async () => {
    // when
    const result = await importHermes(store, oldPath)

    // then
    const missing = result.warnings.filter((w) => w.code === 'missing_column').map((w) => `${String(w.table)}.${String(w.column)}`)
    expect(missing).toEqual(
      expect.arrayContaining([
        'sessions.end_reason',
        'sessions.parent_session_id',
        'messages.compacted',
        'messages.reasoning_details',
        'messages.token_count',
      ]),
    )
    expect(result.warnings).toContainEqual(expect.objectContaining({ code: 'bad_timestamp', hermesSessionId: 'old-1' }))
    expect(result.warnings).toContainEqual(expect.objectContaining({ code: 'orphan_messages' }))
    const old = await store.load(hermesSessionId('old-1'))
    expect(old.messages.map((m) => m.payload.content)).toEqual(['hi', 'hello', 'bye'])
    expect(old.messages[1]?.createdAt).toBe(old.messages[0]?.createdAt)
    expect((await store.load(hermesSessionId('orphan-7'))).messages.map((m) => m.payload.content)).toEqual(['no session row'])
    expect(result.sessions.every((s) => s.liveMatches)).toBe(true)
  })

  it('refuses a file that is not a hermes state.db', async () => {
    await expect(importHermes(store, join(dir, 'missing.db'))).rejects.toMatchObject({ code: 'IMPORT_FAILED' })
  })
})
