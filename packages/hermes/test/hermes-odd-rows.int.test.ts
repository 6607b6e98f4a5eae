/**
 * A state.db with rows hermes itself never writes but an odd file can hold (README: "warnings: missing
 * columns, skipped rows, …: reported, never thrown"; "Real files vary by version: read columns
 * defensively and report what is missing").
 *
 * - A row id past 2^53 - 1 (an INTEGER PRIMARY KEY set by hand), or a `messages` table whose `id` is not
 *   an integer at all (REAL, TEXT): regression, the import threw `INVALID_INPUT` ("rowId must be an
 *   integer") half-way, after writing the sessions before it. Such a row has no stable message id
 *   (JavaScript cannot hold the integer exactly: two rows would share one message), so it is skipped
 *   and reported (`unsupported_row`), and the rest of the file imports.
 * - Two rows with one id in a session (a `messages` table without its primary key): regression, both
 *   became one message id with two contents and the import threw `MESSAGE_CONFLICT` half-way. The
 *   first row keeps the id; the others are skipped and reported (`unsupported_row`).
 * - Rows whose `session_id` is NULL: no session holds them; they were dropped without a word. They
 *   are reported now (`unsupported_row`).
 * - TEXT in the REAL `timestamp` / `started_at` columns (hermes writes epoch seconds): regression, a
 *   text was read with `Date.parse`, which reads `2024-02-30T00:00:00Z` as March 1, a text without a
 *   zone in the machine's local time and other texts as some date: the message was stored with a time
 *   the row never held. Only an ISO-8601 timestamp of a real instant is read now; any other text is
 *   unreadable (`bad_timestamp`: the previous row's time, or the session's).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { messageIdFromExternal } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { hermesSessionId, importHermes } from '@turnlog/hermes'
import Database from 'better-sqlite3'

let dir: string
let store: PostgresStore
useTestStore((t) => ({ store } = t))

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-odd-'))
})
afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

const SESSIONS = 'CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, parent_session_id TEXT, started_at REAL, end_reason TEXT)'
const COLUMNS =
  'session_id TEXT, role TEXT, content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL, active INTEGER'

/** A state.db with `messages.id` declared `idType`, and the rows given as [id, session, role, content] (each session gets its row). */
function stateDb(name: string, idType: string, rows: readonly (readonly [unknown, string | null, string, string])[]): string {
  const path = join(dir, name)
  const db = new Database(path)
  db.exec(`${SESSIONS}; CREATE TABLE messages (id ${idType}, ${COLUMNS})`)
  const sessions = [...new Set(rows.flatMap(([, session]) => (session === null ? [] : [session])))]
  for (const [k, session] of sessions.entries())
    db.prepare("INSERT INTO sessions VALUES (?, 'cli', NULL, ?, NULL)").run(session, 1760000000 + k)
  const insert = db.prepare('INSERT INTO messages (id, session_id, role, content, timestamp, active) VALUES (?, ?, ?, ?, ?, 1)')
  let t = 1760000000.5
  for (const [id, session, role, content] of rows) insert.run(id, session, role, content, (t += 1))
  db.close()
  return path
}

async function liveIds(hermesSession: string): Promise<string[]> {
  return (await store.load(hermesSessionId(hermesSession))).messages.map((m) => m.id)
}

describe('importHermes: rows hermes never writes', () => {
  it('skips and reports a row id past 2^53 - 1 instead of throwing half-way; the other sessions and rows import', async () => {
    // given: session a is fine, session b holds one row whose id JavaScript cannot hold exactly
    const path = stateDb('big-id.db', 'INTEGER PRIMARY KEY', [
      [1, 'a', 'user', 'hi'],
      [2, 'a', 'assistant', 'hello'],
      [3, 'b', 'user', 'first'],
      [BigInt('9007199254740993'), 'b', 'user', 'huge id'],
    ])

    // when
    const result = await importHermes(store, path)

    // then
    expect(result.sessions.map((s) => [s.hermesSessionId, s.rows, s.skippedRows, s.liveMatches])).toEqual([
      ['a', 2, 0, true],
      ['b', 2, 1, true],
    ])
    expect(await liveIds('a')).toEqual([messageIdFromExternal('hermes:a:1'), messageIdFromExternal('hermes:a:2')])
    expect(await liveIds('b')).toEqual([messageIdFromExternal('hermes:b:3')])
    expect(result.warnings).toContainEqual(expect.objectContaining({ code: 'unsupported_row', hermesSessionId: 'b' }))
    // and importing it again changes nothing
    expect((await importHermes(store, path)).eventsWritten).toBe(0)
  })

  it('skips and reports REAL and TEXT ids of a table whose id is not an integer key', async () => {
    // given
    const path = stateDb('loose-id.db', '', [
      [10, 'c', 'user', 'q'],
      [10.5, 'c', 'assistant', 'half'],
      ['x7', 'c', 'assistant', 'text id'],
      [11, 'c', 'assistant', 'r'],
    ])

    // when
    const result = await importHermes(store, path)

    // then
    const [a] = result.sessions
    expect(a).toMatchObject({ rows: 4, skippedRows: 2, liveMatches: true })
    expect((await store.load(hermesSessionId('c'))).messages.map((m) => m.payload['content'])).toEqual(['q', 'r'])
    const warning = result.warnings.find((w) => w.code === 'unsupported_row' && w.hermesSessionId === 'c')
    expect(warning?.message).toMatch(/2 row\(s\).*10\.5, x7/)
  })

  it('skips and reports a row whose id repeats an earlier row of its session (a table without its primary key), instead of throwing MESSAGE_CONFLICT', async () => {
    // given: id 1 twice with two contents, and id 5 twice with one content
    const path = stateDb('repeated-id.db', 'INTEGER', [
      [1, 'e', 'user', 'hi'],
      [1, 'e', 'assistant', 'same id, other content'],
      [2, 'e', 'assistant', 'next'],
      [5, 'f', 'user', 'same'],
      [5, 'f', 'user', 'same'],
    ])

    // when
    const result = await importHermes(store, path)

    // then
    expect(result.sessions.map((s) => [s.hermesSessionId, s.rows, s.skippedRows, s.appended, s.liveMatches])).toEqual([
      ['e', 3, 1, 2, true],
      ['f', 2, 1, 1, true],
    ])
    expect((await store.load(hermesSessionId('e'))).messages.map((m) => m.payload['content'])).toEqual(['hi', 'next'])
    expect(result.warnings).toContainEqual(expect.objectContaining({ code: 'unsupported_row', hermesSessionId: 'e', rowIds: [1] }))
    expect((await importHermes(store, path)).eventsWritten).toBe(0)
  })

  it('reports rows whose session_id is NULL instead of dropping them silently', async () => {
    // given
    const path = stateDb('homeless.db', 'INTEGER PRIMARY KEY', [
      [1, 'd', 'user', 'hi'],
      [2, null, 'user', 'nobody holds me'],
      [3, null, 'assistant', 'nor me'],
    ])

    // when
    const result = await importHermes(store, path)

    // then
    expect(result.warnings).toContainEqual(
      expect.objectContaining({ code: 'unsupported_row', message: expect.stringMatching(/^2 message row\(s\) with a NULL session_id/) }),
    )
    expect(result.sessions.map((s) => [s.hermesSessionId, s.rows])).toEqual([['d', 1]])
  })

  it('reads a TEXT timestamp only when it is an ISO-8601 timestamp of a real instant; any other text is a bad_timestamp', async () => {
    // given: session t, rows with REAL, numeric-text and ISO-text timestamps, a date February 2024 does
    // not have, and SQLite's zone-less datetime text; session u starts on 2023-02-29 and its row has none
    const path = join(dir, 'text-timestamps.db')
    const db = new Database(path)
    db.exec(`${SESSIONS}; CREATE TABLE messages (id INTEGER PRIMARY KEY, ${COLUMNS})`)
    db.prepare("INSERT INTO sessions VALUES ('t', 'cli', NULL, 1760000000, NULL)").run()
    db.prepare("INSERT INTO sessions VALUES ('u', 'cli', NULL, '2023-02-29T10:00:00Z', NULL)").run()
    const insert = db.prepare('INSERT INTO messages (id, session_id, role, content, timestamp, active) VALUES (?, ?, ?, ?, ?, 1)')
    insert.run(1, 't', 'user', 'real', 1760000000.5)
    insert.run(2, 't', 'assistant', 'no such day', '2024-02-30T00:00:00Z')
    insert.run(3, 't', 'user', 'iso text', '2025-10-09T09:00:00+02:00')
    insert.run(4, 't', 'assistant', 'numeric text', '1760000100.25')
    insert.run(5, 't', 'user', 'no zone', '2025-10-09 09:05:00')
    insert.run(6, 'u', 'user', 'no timestamp', null)
    expect(db.prepare('SELECT typeof(timestamp) AS t FROM messages ORDER BY id').all()).toEqual(
      ['real', 'text', 'text', 'real', 'text', 'null'].map((t) => ({ t })),
    )
    db.close()

    // when
    const result = await importHermes(store, path)

    // then: each row's createdAt is its own real time, else the previous row's (the session's for the first)
    const created = async (id: string): Promise<string[]> => (await store.load(hermesSessionId(id))).messages.map((m) => m.createdAt)
    expect(await created('t')).toEqual([
      '2025-10-09T08:53:20.500000Z',
      '2025-10-09T08:53:20.500000Z',
      '2025-10-09T07:00:00.000000Z',
      '2025-10-09T08:55:00.250000Z',
      '2025-10-09T08:55:00.250000Z',
    ])
    expect(await created('u')).toEqual(['1970-01-01T00:00:00.000000Z'])
    const bad = result.warnings.filter((w) => w.code === 'bad_timestamp').map((w) => [w.hermesSessionId, w.rowIds])
    expect(bad).toEqual([
      ['t', [2, 5]],
      ['u', [6]],
    ])
    expect(result.sessions.every((s) => s.liveMatches)).toBe(true)
  })
})
