/**
 * packages/hermes/README.md, the promises no other hermes test pins down (an audit of the README,
 * promise by promise): each `it` quotes the promise it holds the importer to. The state.db files are
 * real SQLite files written by the test (better-sqlite3, as hermes' own tables), imported into
 * Postgres and embedded PGlite.
 *
 * - "nothing is dropped": NUL and lone surrogates (which hermes' Python writes through `json.dumps`
 *   escapes, and NUL also raw) come back exactly, in every column, in the session row's metadata
 *   and in the hermes session id; the message ids are the documented derivation.
 * - "importing the same file again changes nothing", for such a file too.
 * - "toWire sends the payload as it is" (the README said "a wire adapter has one key to strip", as if
 *   something stripped it): `hermes` and the copied reasoning fields reach the provider request.
 * - "A state.db that hermes kept writing to imports incrementally ...; `liveMatches: false` and a
 *   `live_view_mismatch` warning say when they do not", and warnings are "never thrown": a row hermes
 *   updated in place since the last import (a token count filled in later, an edit) made the re-import
 *   throw MESSAGE_CONFLICT, writing none of the session's new rows and no later session. It is now a
 *   revision (warning `row_changed`); a deleted row is the documented mismatch.
 * - the file is opened read-only: importing leaves its bytes as they were.
 * - a session of the file held by another tenant refuses the whole import (`SESSION_EXISTS`), and
 *   nothing of the file is written, not even the sessions before it.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createHash } from 'node:crypto'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { isTurnlogError, messageIdFromExternal, toWire } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, turnlogRejection, useTestStoreOfKind } from '@turnlog/testing'
import { audit } from '@turnlog/audit'
import { hermesSessionId, importHermes } from '@turnlog/hermes'
import Database from 'better-sqlite3'
import { HermesFixture } from './hermes-fixture.js'

let dir: string
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-promises-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const sha256 = async (path: string): Promise<string> =>
  createHash('sha256')
    .update(await readFile(path))
    .digest('hex')

/** A hermes session id with a NUL in it, and one without. */
const NUL_SESSION = 'sess\u0000ion'
const PLAIN_SESSION = '20261206_101500_ab12cd'

/**
 * A state.db whose rows carry NUL raw and NUL and lone surrogates as JSON escapes (what Python's
 * `json.dumps` writes for them), in content, JSON content parts, tool calls, ids, names, reasoning and
 * columns kept under `hermes`.
 */
function buildHostileStateDb(path: string): void {
  const f = new HermesFixture(path)
  for (const session of [NUL_SESSION, PLAIN_SESSION]) {
    f.session(session, { title: 'ti\u0000tle' })
    f.add(session, { role: 'user', content: 'a\u0000b', api_content: 'x\u0000y', platform_message_id: 'tg:\u0000' })
    f.add(session, {
      role: 'assistant',
      content: null,
      tool_calls: '[{"id":"call\\u0000","type":"function","function":{"name":"read","arguments":"{\\"p\\":\\"\\ud800\\u0000\\"}"}}]',
      finish_reason: 'tool_calls',
      reasoning: 'r\u0000',
      reasoning_details: [{ type: 'reasoning.text', text: '\ud800' }],
    })
    f.add(session, {
      role: 'tool',
      tool_call_id: 'call\u0000',
      tool_name: 'read\u0000',
      content: '\u0001json:[{"type":"text","text":"\\udc00\\u0000"}]',
    })
    f.add(session, { role: 'assistant', content: 'lone \udbff? no: 😀 and \u0000', finish_reason: 'stop' })
  }
  f.close()
}

/** What each row of {@link buildHostileStateDb} must load as (payload), in row order. */
const expectedPayloads = [
  { role: 'user', content: 'a\u0000b', hermes: { platform_message_id: 'tg:\u0000', api_content: 'x\u0000y', token_count: undefined } },
  {
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call\u0000', type: 'function', function: { name: 'read', arguments: '{"p":"\ud800\u0000"}' } }],
    finish_reason: 'tool_calls',
    reasoning: 'r\u0000',
    reasoning_details: [{ type: 'reasoning.text', text: '\ud800' }],
  },
  { role: 'tool', content: [{ type: 'text', text: '\udc00\u0000' }], tool_call_id: 'call\u0000', name: 'read\u0000' },
  // a lone surrogate written raw: better-sqlite3 stores its 3-byte form (ED AF BF), which is not UTF-8
  // (hermes' Python cannot write it: its sqlite3 encodes strictly); it reads back as three U+FFFD
  { role: 'assistant', content: 'lone \ufffd\ufffd\ufffd? no: 😀 and \u0000', finish_reason: 'stop' },
]

describe.each(STORE_KINDS)('packages/hermes/README.md promises (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('"nothing is dropped": NUL and lone surrogates come back exactly, ids as documented, and a re-import writes nothing', async () => {
    const path = join(dir, `hostile-${kind}.db`)
    buildHostileStateDb(path)
    const first = await importHermes(store, path)
    expect(first.warnings).toEqual([])
    for (const hermesId of [NUL_SESSION, PLAIN_SESSION]) {
      const result = first.sessions.find((s) => s.hermesSessionId === hermesId)
      expect(result).toMatchObject({ rows: 4, skippedRows: 0, appended: 4, liveMatches: true, sessionId: hermesSessionId(hermesId) })
      const loaded = await store.load(hermesSessionId(hermesId))
      expect(loaded.messages.map((m) => JSON.parse(JSON.stringify(m.payload)) as unknown)).toEqual(
        expectedPayloads.map((p) => JSON.parse(JSON.stringify(p)) as unknown),
      )
      // "row R becomes message messageIdFromExternal('hermes:X:R')": for a session id with NUL too
      const rowIds = loaded.messages.map((_, k) => k + 1 + (hermesId === NUL_SESSION ? 0 : 4))
      expect(loaded.messages.map((m) => m.id)).toEqual(rowIds.map((r) => messageIdFromExternal(`hermes:${hermesId}:${String(r)}`)))
      // the externalId is kept only where the store can index it (no NUL, no lone surrogate)
      expect(loaded.messages.map((m) => m.externalId)).toEqual(
        rowIds.map((r) => (hermesId === NUL_SESSION ? undefined : `hermes:${hermesId}:${String(r)}`)),
      )
      // "The sessions row is kept in the session metadata (metadata.hermes.columns)"
      const info = await store.getSession(hermesSessionId(hermesId))
      expect(info.metadata).toMatchObject({ hermes: { sessionId: hermesId, columns: { id: hermesId, title: 'ti\u0000tle' } } })
    }
    const again = await importHermes(store, path)
    expect(again.eventsWritten).toBe(0)
    expect(again.sessions.map((s) => [s.appended, s.duplicates, s.liveMatches])).toEqual([
      [0, 4, true],
      [0, 4, true],
    ])
  })

  it('"Genuine live duplicates (the #92231 re-insert bug) stay separate messages, so audit() reports them", also when the re-insert dropped the bookkeeping', async () => {
    // given: rows with a token count, then the transcript flushed again as hermes reloads it (no token_count)
    const path = join(dir, `reinserted-${kind}.db`)
    const f = new HermesFixture(path)
    f.session('reinserted')
    f.add('reinserted', { role: 'user', content: 'What is 2+3?', token_count: 7 })
    f.add('reinserted', { role: 'assistant', content: '5', token_count: 1 })
    f.reinsertLive('reinserted')
    f.add('reinserted', { role: 'user', content: 'and 4+4?', token_count: 6 })
    f.close()

    // when
    await importHermes(store, path)
    const report = await audit(store, hermesSessionId('reinserted'))

    // then: before the fix the copies' content hashes differed (`hermes.token_count`) and nothing was reported
    const copies = report.findings.filter((x) => x.kind === 'live_duplicate_copy')
    const loaded = await store.load(hermesSessionId('reinserted'))
    expect(copies.map((x) => x.messageIds)).toEqual([
      [loaded.messages[0]?.id, loaded.messages[2]?.id],
      [loaded.messages[1]?.id, loaded.messages[3]?.id],
    ])
    expect(loaded.messages[0]?.payload).toHaveProperty('hermes', { token_count: 7 })
    expect(loaded.messages[2]?.payload).not.toHaveProperty('hermes')
  })

  it('"toWire sends the payload as it is": `hermes` and the copied reasoning fields included', async () => {
    const loaded = await store.load(hermesSessionId(PLAIN_SESSION))
    const wire = toWire(loaded.messages) as unknown as Record<string, unknown>[]
    expect(wire[0]).toHaveProperty('hermes', { platform_message_id: 'tg:\u0000', api_content: 'x\u0000y' })
    expect(wire[1]).toHaveProperty('reasoning', 'r\u0000')
    expect(wire[1]).toHaveProperty('finish_reason', 'tool_calls')
  })

  it('imports incrementally when hermes changed rows in place: a revision each, new rows appended, later sessions imported; a deleted row is a mismatch, never thrown', async () => {
    const path = join(dir, `in-place-${kind}.db`)
    const f = new HermesFixture(path)
    f.session('p1')
    f.add('p1', { role: 'user', content: 'one' })
    const answer = f.add('p1', { role: 'assistant', content: 'two', finish_reason: 'stop' })
    const question = f.add('p1', { role: 'user', content: 'three' })
    f.close()
    await importHermes(store, path)

    // hermes goes on: a token count filled in, an edit, a new row, a new session
    const db = new Database(path)
    db.prepare('update messages set token_count = 99 where id = ?').run(answer)
    db.prepare('update messages set content = ? where id = ?').run('three, edited', question)
    db.prepare('insert into messages (session_id, role, content, timestamp) values (?, ?, ?, ?)').run(
      'p1',
      'assistant',
      'four',
      1_770_000_000.5,
    )
    db.prepare('insert into sessions (id, started_at) values (?, ?)').run('p2', 1_770_000_001)
    db.prepare('insert into messages (session_id, role, content, timestamp) values (?, ?, ?, ?)').run(
      'p2',
      'user',
      'later session',
      1_770_000_002,
    )
    db.close()

    const again = await importHermes(store, path)
    expect(again.warnings).toEqual([expect.objectContaining({ code: 'row_changed', hermesSessionId: 'p1', rowIds: [answer, question] })])
    expect(again.sessions.map((r) => [r.hermesSessionId, r.appended, r.revised, r.liveMatches])).toEqual([
      ['p1', 1, 2, true],
      ['p2', 1, 0, true],
    ])
    const loaded = await store.load(hermesSessionId('p1'))
    expect(loaded.messages.map((m) => m.payload.content)).toEqual(['one', 'two', 'three, edited', 'four'])
    expect(loaded.messages[1]?.payload).toMatchObject({ hermes: { token_count: 99 } })
    expect((await importHermes(store, path)).eventsWritten).toBe(0)

    // a row compacted away and then changed: reported, not recorded, not thrown
    const c = new HermesFixture(join(dir, `compacted-${kind}.db`))
    c.session('c1')
    const early = c.add('c1', { role: 'user', content: 'early' })
    c.add('c1', { role: 'assistant', content: 'early answer', finish_reason: 'stop' })
    c.compact('c1', { summary: 'they talked', keepTail: 1 })
    c.close()
    await importHermes(store, join(dir, `compacted-${kind}.db`))
    const cdb = new Database(join(dir, `compacted-${kind}.db`))
    cdb.prepare('update messages set content = ? where id = ?').run('early, edited', early)
    cdb.close()
    const compacted = await importHermes(store, join(dir, `compacted-${kind}.db`))
    expect(compacted.warnings).toEqual([expect.objectContaining({ code: 'row_changed', rowIds: [early] })])
    expect(compacted.sessions.map((r) => [r.liveMatches, r.eventsWritten])).toEqual([[true, 0]])

    // a row hermes deleted: reported, not thrown
    const d = new Database(path)
    d.prepare('delete from messages where id = ?').run(question)
    d.close()
    const deleted = await importHermes(store, path)
    expect(deleted.sessions.map((r) => r.liveMatches)).toEqual([false, true])
    expect(deleted.warnings.map((w) => w.code)).toEqual(['live_view_mismatch'])
  })

  it('reads the file read-only: its bytes are unchanged by an import', async () => {
    const path = join(dir, `read-only-${kind}.db`)
    buildHostileStateDb(path)
    const before = await sha256(path)
    await importHermes(store, path)
    expect(await sha256(path)).toBe(before)
  })

  it('a session held by another tenant refuses the whole import (SESSION_EXISTS): nothing of the file is written', async () => {
    const path = join(dir, `tenant-${kind}.db`)
    const f = new HermesFixture(path)
    f.session('t-first')
    f.add('t-first', { role: 'user', content: 'first' })
    f.session('t-second')
    f.add('t-second', { role: 'user', content: 'second' })
    f.close()
    await store.createSession({ id: hermesSessionId('t-second'), tenantId: 'someone-else' })
    const error = await turnlogRejection(importHermes(store, path, { tenantId: 'me' }))
    expect(isTurnlogError(error, 'SESSION_EXISTS')).toBe(true)
    expect(error.details).toMatchObject({ sessionId: hermesSessionId('t-second') })
    const first = await turnlogRejection(store.getSession(hermesSessionId('t-first')))
    expect(first.code).toBe('SESSION_NOT_FOUND')
    expect((await store.load(hermesSessionId('t-second'))).messages).toEqual([])
  })
})
