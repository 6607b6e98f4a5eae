import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createReadStream, createWriteStream } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createInterface } from 'node:readline'
import { once } from 'node:events'
import { createMessage, toMessage, type Message, type SessionId, type StoredEvent } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, openTestStore, type OpenedTestStore, type TestDatabase } from '@turnlog/testing'
import { exportSessions, importEvents, verifyChain } from '@turnlog/audit'
import { sql } from 'kysely'

// content that must survive byte for byte: NUL, lone high and low surrogates, astral characters,
// line/paragraph separators (JSON.stringify leaves them raw), RTL text and controls
const NUL = 'a\u0000b'
const LONE = 'cut emoji \ud83d| and \ude00 alone'
const ASTRAL = '👩‍👩‍👧‍👦 𝄞 𠜎'
const SEPARATORS = 'line\u2028para\u2029next\u0085end'

let dir: string, exportPath: string
let dbA: TestDatabase, dbB: TestDatabase, dbC: TestDatabase
let source: PostgresStore, target: PostgresStore, pglite: PostgresStore
let embedded: OpenedTestStore
let lines: string[]
let ids: { weird: SessionId; fork: SessionId; empty: SessionId; other: SessionId }
let weirdMessages: Message[]

async function writeExport(path: string, iterable: AsyncIterable<string>): Promise<void> {
  const out = createWriteStream(path, { encoding: 'utf8' })
  for await (const line of iterable) if (!out.write(`${line}\n`)) await once(out, 'drain')
  out.end()
  await once(out, 'finish')
}

function readLines(path: string): AsyncIterable<string> {
  return createInterface({ input: createReadStream(path, { encoding: 'utf8' }), crlfDelay: Infinity })
}

async function eventsOf(store: PostgresStore, id: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(id)) out.push(e)
  return out
}

/** Everything the port shows of a session. */
async function snapshot(store: PostgresStore, id: SessionId): Promise<unknown> {
  return {
    info: await store.getSession(id),
    load: await store.load(id),
    transcript: await store.transcript(id),
    events: await eventsOf(store, id),
  }
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-export-'))
  ;[dbA, dbB, dbC] = await Promise.all([
    createTestDatabase({ migrated: true }),
    createTestDatabase({ migrated: true }),
    createTestDatabase({ migrated: true }),
  ])
  source = await openStore({ connectionString: dbA.connectionString })
  target = await openStore({ connectionString: dbB.connectionString })
  embedded = await openTestStore('pglite')
  pglite = embedded.store

  // a session with every event type and hostile content
  const weird = await source.createSession({ tenantId: 'acme', metadata: { title: 'weird', nested: { n: 1, list: [true, null] } } })
  weirdMessages = [
    createMessage({ role: 'system', content: 'You are terse.' }),
    createMessage(
      { role: 'user', content: NUL, note: LONE },
      { externalId: 'telegram:42:9001', scope: null, createdAt: '2026-03-01T10:00:00.123456Z' },
    ),
    createMessage({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: 'call_01', type: 'function', function: { name: 'read_file', arguments: '{"path":"\\u0000"}' } }],
      reasoning_content: ASTRAL,
    }),
    createMessage({
      role: 'tool',
      tool_call_id: 'call_01',
      content: [
        { type: 'text', text: SEPARATORS },
        { type: 'text', text: LONE },
      ],
    }),
    createMessage({ role: 'assistant', content: ASTRAL, '1': 'integer-like key', __proto__: 'kept' } as never),
  ]
  await source.append(weird, weirdMessages)
  await source.revise(weird, weirdMessages[4]?.id ?? '', { role: 'assistant', content: `${ASTRAL} (edited)` })
  const streaming = createMessage({ role: 'assistant', content: 'partial…' }, { status: 'partial' })
  await source.append(weird, [streaming])
  await source.finalize(weird, streaming.id, { role: 'assistant', content: 'complete.' })
  const oops = createMessage({ role: 'user', content: 'oops' })
  await source.append(weird, [oops, createMessage({ role: 'assistant', content: '(empty)' })])
  await source.rewind(weird, { from: oops.id }, { reason: 'retry' })
  await source.compact(weird, {
    covered: [weirdMessages[1]?.id ?? '', weirdMessages[2]?.id ?? '', weirdMessages[3]?.id ?? ''],
    summary: createMessage({ role: 'user', content: `[summary] ${LONE}` }),
    reason: 'context window',
    metadata: { tokens: 1234 },
  })
  await source.append(weird, [createMessage({ role: 'user', content: 'still streaming' }, { status: 'partial' })])
  const fork = await source.fork(weird, { at: weirdMessages[0]?.id ?? '', metadata: { branch: 'b' } })
  await source.append(fork, [createMessage({ role: 'user', content: 'a branch' })])
  const empty = await source.createSession()
  const other = await source.createSession({ tenantId: 'other' })
  await source.append(other, [createMessage({ role: 'user', content: 'hello' })])
  ids = { weird, fork, empty, other }

  exportPath = join(dir, 'export.jsonl')
  await writeExport(exportPath, exportSessions(source, { all: true }))
  lines = (await readFile(exportPath, 'utf8')).split('\n').slice(0, -1)
})

afterAll(async () => {
  await Promise.all([source.close(), target.close(), embedded.close()])
  await Promise.all([dbA.drop(), dbB.drop(), dbC.drop()])
  await rm(dir, { recursive: true, force: true })
})

describe('exportSessions', () => {
  it('writes one line per record, valid UTF-8 without raw NUL or separators, no positions or xids', async () => {
    // given
    const bytes = await readFile(exportPath)
    const events = (await Promise.all(Object.values(ids).map((id) => eventsOf(source, id)))).flat()

    // then
    expect(() => new TextDecoder('utf-8', { fatal: true }).decode(bytes)).not.toThrow()
    expect(bytes.includes(0)).toBe(false)
    expect(/[\u2028\u2029\u0085]/.test(bytes.toString('utf8'))).toBe(false)
    const records = lines.map((l) => JSON.parse(l) as Record<string, unknown>)
    expect(records[0]).toMatchObject({ format: 'turnlog-export', version: 1 })
    expect(records.filter((r) => r['kind'] === 'session')).toHaveLength(4)
    expect(records.filter((r) => r['kind'] === 'event')).toHaveLength(events.length)
    expect(records[records.length - 1]).toEqual({ kind: 'end', sessions: 4, events: events.length })
    expect(lines.some((l) => /global_?position|tx_?id|xid/i.test(l))).toBe(false)
    const fork = records.find((r) => r['kind'] === 'session' && r['id'] === ids.fork)
    expect(fork?.['parent']).toEqual({ sessionId: ids.weird, version: expect.any(Number), at: weirdMessages[0]?.id })
  })

  it('refuses to export a log whose stored link no longer verifies', async () => {
    // given: a session whose payload is rewritten around the store
    const victim = await source.createSession()
    await source.append(victim, [createMessage({ role: 'user', content: 'original' })])
    await sql`update turnlog.events set payload = ${JSON.stringify({ role: 'user', content: 'forged' })}::json where session_id = ${victim}`.execute(
      source.db,
    )

    // when / then
    const drain = async (): Promise<void> => {
      for await (const line of exportSessions(source, { sessionIds: [victim] })) void line
    }
    await expect(drain()).rejects.toMatchObject({ code: 'CORRUPT_LOG', details: { sessionId: victim, seq: 1 } })
  })
})

describe('importEvents', () => {
  it('reproduces every session exactly in an empty Postgres database', async () => {
    // when
    const result = await importEvents(target, readLines(exportPath))

    // then
    const total = lines.length - 6
    expect(result).toEqual({ sessions: 4, eventsWritten: total, eventsSkipped: 0, sessionIds: expect.arrayContaining(Object.values(ids)) })
    for (const id of Object.values(ids)) expect(await snapshot(target, id)).toEqual(await snapshot(source, id))
    expect((await target.rebuild({ verify: true })).drift).toEqual([])
    for (const id of Object.values(ids)) expect((await verifyChain(target, id)).ok).toBe(true)
  })

  it('carries NUL, lone surrogates, astral characters and separators byte for byte', async () => {
    // when
    const transcript = await target.transcript(ids.weird)
    const byId = new Map(transcript.entries.map((e) => [`${e.message.id}/${e.revision}`, e.message.payload]))

    // then
    expect(byId.get(`${weirdMessages[1]?.id}/0`)).toEqual({ role: 'user', content: NUL, note: LONE })
    expect(byId.get(`${weirdMessages[2]?.id}/0`)?.['reasoning_content']).toBe(ASTRAL)
    expect(byId.get(`${weirdMessages[3]?.id}/0`)?.content).toEqual([
      { type: 'text', text: SEPARATORS },
      { type: 'text', text: LONE },
    ])
    expect(JSON.stringify(byId.get(`${weirdMessages[4]?.id}/0`))).toBe(JSON.stringify(weirdMessages[4]?.payload))
    expect(transcript.entries.find((e) => e.message.id === weirdMessages[1]?.id)?.message.createdAt).toBe('2026-03-01T10:00:00.123456Z')
  })

  it('reproduces the same sessions in PGlite', async () => {
    // when
    const result = await importEvents(pglite, readLines(exportPath))

    // then
    expect(result.eventsWritten).toBe(lines.length - 6)
    for (const id of Object.values(ids)) expect(await snapshot(pglite, id)).toEqual(await snapshot(source, id))
    expect((await pglite.rebuild({ verify: true })).drift).toEqual([])
  })

  it('changes nothing when the same file is imported again, and extends a session from a longer export', async () => {
    // when
    const again = await importEvents(target, lines)

    // then
    expect(again.eventsWritten).toBe(0)
    expect(again.eventsSkipped).toBe(lines.length - 6)

    // given: the source moved on
    await source.append(ids.other, [createMessage({ role: 'assistant', content: 'hi!' }), createMessage({ role: 'user', content: 'bye' })])
    const progress: number[] = []
    // when
    const more = await importEvents(target, exportSessions(source, { sessionIds: [ids.other] }), {
      onProgress: (p) => progress.push(p.written),
    })
    // then
    expect(more).toMatchObject({ sessions: 1, eventsWritten: 2, eventsSkipped: 1 })
    expect(progress).toEqual([2])
    expect(await snapshot(target, ids.other)).toEqual(await snapshot(source, ids.other))
  })

  it('refuses a session whose stored log differs, and a message id of another session, writing nothing of them', async () => {
    // given: another store wrote a different log under the same session id, and reused a message id in a new session
    const otherDb = await createTestDatabase({ migrated: true })
    const other = await openStore({ connectionString: otherDb.connectionString })
    try {
      await other.createSession({ id: ids.empty, tenantId: 'intruder' })
      await other.append(ids.empty, [createMessage({ role: 'user', content: 'not what the target has' })])
      await other.createSession({ id: ids.other, tenantId: 'other' })
      await other.append(ids.other, [createMessage({ role: 'user', content: 'a different first message' })])
      const thief = await other.createSession()
      await other.append(thief, [
        toMessage({ id: weirdMessages[0]?.id, payload: { role: 'system', content: 'You are terse.' }, createdAt: '2026-01-01T00:00:00Z' }),
      ])
      const emptyBefore = await target.getSession(ids.empty)
      const otherBefore = await target.getSession(ids.other)
      const conflictsBefore = await target.countConflicts()
      let storedFirst: string | undefined
      for await (const e of target.events(ids.other)) {
        storedFirst = e.hash
        break
      }

      // when / then: the same seq with another event
      await expect(importEvents(target, exportSessions(other, { sessionIds: [ids.other] }))).rejects.toMatchObject({
        code: 'MESSAGE_CONFLICT',
        details: {
          sessionId: ids.other,
          seq: 1,
          line: 3,
          storedHash: storedFirst,
          fileHash: expect.stringMatching(/^[0-9a-f]{64}$/),
          reason: 'seq_mismatch',
        },
      })
      // the target's (empty) log is a prefix of the file's, but the session's attributes differ
      await expect(importEvents(target, exportSessions(other, { sessionIds: [ids.empty] }))).rejects.toMatchObject({
        code: 'SESSION_EXISTS',
      })
      // a message that belongs to another session
      await expect(importEvents(target, exportSessions(other, { sessionIds: [thief] }))).rejects.toMatchObject({
        code: 'MESSAGE_CONFLICT',
        details: { reason: 'foreign_session', messageId: weirdMessages[0]?.id, otherSessionId: ids.weird },
      })
      expect(await target.getSession(ids.empty)).toEqual(emptyBefore)
      // an import records no conflict evidence: the file is not a writer (errors.md)
      expect(await target.countConflicts()).toBe(conflictsBefore)
      expect(await target.getSession(ids.other)).toEqual(otherBefore)
      await expect(target.getSession(thief)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    } finally {
      await other.close()
      await otherDb.drop()
    }
  })

  it('refuses a tampered file, naming the line and seq', async () => {
    // given: a payload changed without its hashes, and a link changed alone
    const at = lines.findIndex((l) => l.includes('"type":"message_appended"') && l.includes('hello'))
    const forgedPayload = lines.map((l, i) => (i === at ? l.replace('hello', 'HELLO') : l))
    const forgedLink = lines.map((l, i) => (i === at ? l.replace(/"hash":"[0-9a-f]{4}/, '"hash":"0000') : l))

    // when / then
    await expect(importEvents(target, forgedPayload)).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: at + 1, seq: 1 } })
    await expect(importEvents(target, forgedLink)).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: at + 1, seq: 1 } })
  })

  it('refuses malformed lines with their line number, and a file without its end line', async () => {
    // given
    const fresh = await openStore({ connectionString: dbC.connectionString })
    try {
      const broken = [...lines.slice(0, 2), '{"kind":"event",', ...lines.slice(2)]
      const gap = lines.filter((l, i) => !(i > 2 && i === lines.findIndex((x) => x.includes('"seq":2'))))

      // when / then
      await expect(importEvents(fresh, broken)).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 3 } })
      await expect(importEvents(fresh, ['{"format":"something-else"}'])).rejects.toMatchObject({
        code: 'IMPORT_FAILED',
        details: { line: 1 },
      })
      await expect(importEvents(fresh, gap)).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { expectedSeq: 2, seq: 3 } })
      expect((await fresh.sessions()).sessions).toEqual([])

      // a file cut at a session boundary: the complete sessions are imported, the error says the file is cut
      const lastSession =
        lines
          .map((l, i) => [l, i] as const)
          .filter(([l]) => l.startsWith('{"kind":"session"'))
          .pop()?.[1] ?? 0
      await expect(importEvents(fresh, lines.slice(0, lastSession))).rejects.toMatchObject({
        code: 'IMPORT_FAILED',
        details: { line: lastSession + 1 },
      })
      expect((await fresh.sessions()).sessions).toHaveLength(3)
    } finally {
      await fresh.close()
    }
  })
})
