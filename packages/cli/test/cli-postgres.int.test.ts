/**
 * Every `turnlog` command, run as the real binary against real Postgres (`--database-url`, and the URL
 * environment variables), on a database of its own. The demo writes the fixture sessions.
 */
import { readFile, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from '@jest/globals'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import Database from 'better-sqlite3'
import pg from 'pg'
import { runTurnlog } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

interface SessionsJson {
  sessions: { sessionId: string; version: number; liveCount: number; parent: { sessionId: string } | null }[]
  next: string | null
}
interface Message {
  id: string
  payload: { role: string; content?: unknown; tool_call_id?: string }
}

/** Per-test timeout: each test spawns the binary several times, and a loaded CI runner is slow. */
const SLOW = 240_000

let db: TestDatabase
let dir: string
let url: string
let parent: string
let fork: string
const pgRun = (args: string[], env?: Record<string, string>) =>
  runTurnlog(['--database-url', url, ...args], env === undefined ? { cwd: dir } : { cwd: dir, env })

useDatabaseAndDir('turnlog-cli-pg-', (made) => {
  ;({ db, dir } = made)
  url = db.connectionString
})

describe('turnlog against Postgres', () => {
  it(
    'read-only commands leave an empty database alone and say to migrate; migrate creates the schema',
    async () => {
      // given an empty database
      // when
      const unmigrated = await pgRun(['sessions'])
      const first = await pgRun(['migrate', '--json'])
      const second = await pgRun(['migrate', '--json'])
      // then
      expect(unmigrated.code).toBe(3)
      expect(unmigrated.stderr).toMatch(/error DB_ERROR: .*turnlog\.sessions.* does not exist/)
      expect(unmigrated.stderr).toMatch(/hint: The turnlog schema is missing or older than this turnlog: run `turnlog migrate`/)
      expect(first.code).toBe(0)
      const applied = first.json<{ applied: string[]; known: string[] }>()
      expect(applied.applied).toEqual(applied.known)
      expect(applied.applied.length).toBeGreaterThan(0)
      expect(second.json<{ applied: string[] }>().applied).toEqual([])
      expect(first.stderr).toBe('')
    },
    SLOW,
  )

  it(
    'demo --database-url runs the script on Postgres: 0 lost, 0 duplicated',
    async () => {
      // when
      const run = await pgRun(['demo', '--json'])
      // then
      expect(run.stderr).toBe('')
      expect(run.code).toBe(0)
      const summary = run.json<{
        ok: boolean
        sessionId: string
        forkSessionId: string
        database: { kind: string }
        turnlog: { lost: number; duplicated: number }
        cursorPersister: { lost: number }
      }>()
      expect(summary.database.kind).toBe('postgres')
      expect(summary.ok).toBe(true)
      expect(summary.turnlog.lost).toBe(0)
      expect(summary.turnlog.duplicated).toBe(0)
      expect(summary.cursorPersister.lost).toBeGreaterThan(0)
      parent = summary.sessionId
      fork = summary.forkSessionId
    },
    SLOW,
  )

  it(
    'sessions pages by keyset and reads the URL from TURNLOG_DATABASE_URL or DATABASE_URL',
    async () => {
      // when
      const page1 = (await pgRun(['sessions', '--limit', '1', '--json'])).json<SessionsJson>()
      const page2 = (await pgRun(['sessions', '--limit', '1', '--after', page1.next ?? '', '--json'])).json<SessionsJson>()
      const all = (await pgRun(['sessions', '--all', '--limit', '1', '--json'])).json<SessionsJson>()
      const viaEnv = await runTurnlog(['sessions', '--json'], { cwd: dir, env: { TURNLOG_DATABASE_URL: url } })
      const viaDatabaseUrl = await runTurnlog(['sessions'], { cwd: dir, env: { DATABASE_URL: url } })
      // then
      expect(page1.sessions).toHaveLength(1)
      expect(page1.next).toBe(page1.sessions[0]?.sessionId)
      expect(page2.sessions).toHaveLength(1)
      expect(page2.next).toBeNull()
      expect(new Set(all.sessions.map((s) => s.sessionId))).toEqual(new Set([parent, fork]))
      expect(all.sessions.find((s) => s.sessionId === fork)?.parent?.sessionId).toBe(parent)
      expect(viaEnv.json<SessionsJson>().sessions).toHaveLength(2)
      expect(viaDatabaseUrl.code).toBe(0)
      expect(viaDatabaseUrl.stdout).toContain(parent)
      expect(viaDatabaseUrl.stdout).toMatch(/SESSION\s+VERSION\s+LIVE/)
    },
    SLOW,
  )

  it(
    'replay shows the live list, the transcript, the wire view, and time-travels',
    async () => {
      // when
      const live = (await pgRun(['replay', parent, '--json'])).json<{ version: number; messages: Message[]; pairing: { ok: boolean } }>()
      const transcript = (await pgRun(['replay', parent, '--view', 'transcript', '--json'])).json<{
        entries: { status: string }[]
        events: { type: string }[]
      }>()
      const wire = (await pgRun(['replay', parent, '--view', 'wire', '--json'])).json<{ messages: Record<string, unknown>[] }>()
      const before = (await pgRun(['replay', parent, '--at', '8', '--view', 'wire', '--repair-pairing', '--json'])).json<{
        version: number
        messages: Record<string, unknown>[]
      }>()
      const human = await pgRun(['replay', parent, '--view', 'transcript'])
      // then
      expect(live.messages).toHaveLength(9)
      expect(live.pairing.ok).toBe(true)
      expect(new Set(transcript.entries.map((e) => e.status))).toEqual(new Set(['live', 'compacted', 'retracted', 'superseded-revision']))
      expect(transcript.events.map((e) => e.type)).toEqual(['messages_retracted', 'messages_compacted'])
      expect(wire.messages).toHaveLength(9)
      expect(wire.messages.every((m) => !('id' in m) && !('createdAt' in m))).toBe(true)
      // at version 8 the timed-out call had no result: the repaired copy adds one
      expect(before.version).toBe(8)
      expect(before.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_tests_1' })
      expect(human.code).toBe(0)
      expect(human.stdout).toMatch(/rewind: retracted 1 message\(s\)/)
      expect(human.stdout).toMatch(/compaction: 6 message\(s\)/)
    },
    SLOW,
  )

  it(
    'replay reports an unknown session or a bad version as a usage error with a hint',
    async () => {
      // when
      const unknown = await pgRun(['replay', '01900000-0000-7000-8000-000000000000'])
      const malformed = await pgRun(['replay', 'not-a-uuid', '--json'])
      const beyond = await pgRun(['replay', parent, '--at', '999'])
      // then
      expect(unknown.code).toBe(2)
      expect(unknown.stderr).toMatch(/error SESSION_NOT_FOUND/)
      expect(unknown.stderr).toMatch(/hint: List the sessions with `turnlog sessions`/)
      expect(malformed.code).toBe(2)
      expect(malformed.json<{ error: { code: string } }>().error.code).toBe('INVALID_INPUT')
      expect(beyond.code).toBe(2)
      expect(beyond.stderr).toMatch(/beyond the session's version/)
    },
    SLOW,
  )

  it(
    'rebuild --verify finds a damaged projection (exit 1), rebuild repairs it, audit sees it meanwhile',
    async () => {
      // given: a live row deleted from the projection behind the store's back
      const client = new pg.Client({ connectionString: url })
      await client.connect()
      try {
        await client.query(
          'delete from turnlog.live_messages where session_id = $1 and position = (select max(position) from turnlog.live_messages where session_id = $1)',
          [parent],
        )
      } finally {
        await client.end()
      }
      // when
      const verify = await pgRun(['rebuild', '--verify', '--json'])
      const auditDamaged = await pgRun(['audit', parent, '--json'])
      const auditLenient = await pgRun(['audit', parent, '--fail-on', 'critical'])
      const repair = await pgRun(['rebuild', '--session', parent, '--json'])
      const again = await pgRun(['rebuild', '--verify'])
      // then
      expect(verify.code).toBe(1)
      const drift = verify.json<{ drift: { sessionId: string }[]; rewritten: number }>()
      expect(drift.drift.map((d) => d.sessionId)).toEqual([parent])
      expect(drift.rewritten).toBe(0)
      expect(auditDamaged.code).toBe(1)
      expect(auditDamaged.json<{ findings: { kind: string }[] }>().findings.map((f) => f.kind)).toContain('projection_drift')
      expect(auditLenient.code).toBe(0)
      expect(auditLenient.stdout).toMatch(/ERROR\s+projection_drift/)
      expect(repair.code).toBe(0)
      expect(repair.json<{ rewritten: number }>().rewritten).toBe(1)
      expect(again.code).toBe(0)
      expect(again.stdout).toMatch(/every projection matches its log/)
    },
    SLOW,
  )

  it(
    'audit --transcript reconciles with what the user saw: a turn missing from the log fails',
    async () => {
      // given: the live list as the agent's transcript, once complete and once with a reply the log never got
      const live = (await pgRun(['replay', parent, '--json'])).json<{ messages: Message[] }>().messages
      const complete = join(dir, 'complete.jsonl')
      const lossy = join(dir, 'lossy.jsonl')
      await writeFile(complete, live.map((m) => JSON.stringify(m.payload)).join('\n') + '\n')
      await writeFile(
        lossy,
        [...live.map((m) => JSON.stringify(m.payload)), JSON.stringify({ role: 'assistant', content: 'a reply the log never got' })].join(
          '\n',
        ) + '\n',
      )
      // when
      const clean = await pgRun(['audit', parent, '--transcript', complete, '--json'])
      const lost = await pgRun(['audit', parent, '--transcript', lossy, '--json'])
      const all = await pgRun(['audit', '--all', '--fail-on', 'info'])
      // then
      expect(clean.code).toBe(0)
      expect(clean.json<{ findings: unknown[] }>().findings).toEqual([])
      expect(lost.code).toBe(1)
      expect(lost.json<{ findings: { kind: string; severity: string }[] }>().findings).toContainEqual(
        expect.objectContaining({ kind: 'lost_turn', severity: 'critical' }),
      )
      expect(all.code).toBe(0)
      expect(all.stdout).toMatch(/2 session\(s\), 0 finding\(s\)/)
    },
    SLOW,
  )

  it(
    'audit and export refuse an ambiguous target with exit 2',
    async () => {
      // when
      const none = await pgRun(['audit'])
      const both = await pgRun(['export', parent, '--all', '-o', join(dir, 'x.jsonl')])
      const badSeverity = await pgRun(['audit', parent, '--fail-on', 'fatal'])
      // then
      expect(none.code).toBe(2)
      expect(none.stderr).toMatch(/audit needs a session id or --all/)
      expect(both.code).toBe(2)
      expect(badSeverity.code).toBe(2)
      expect(badSeverity.stderr).toMatch(/Allowed choices are info, warning, error, critical/)
    },
    SLOW,
  )

  it(
    'export writes a verified JSONL file; it restores into an empty database; importing again changes nothing',
    async () => {
      // given
      const file = join(dir, 'backup.jsonl')
      const restoreDb = await createTestDatabase()
      // when
      const exported = await pgRun(['export', '--all', '-o', file, '--json'])
      const imported = await pgRun(['import', file, '--json'])
      const restored = await runTurnlog(['--database-url', restoreDb.connectionString, 'import', file, '--json'], { cwd: dir })
      const restoredLive = await runTurnlog(['--database-url', restoreDb.connectionString, 'replay', parent, '--view', 'wire', '--json'], {
        cwd: dir,
      })
      const originalLive = await pgRun(['replay', parent, '--view', 'wire', '--json'])
      const restoredAudit = await runTurnlog(['--database-url', restoreDb.connectionString, 'audit', '--all', '--fail-on', 'info'], {
        cwd: dir,
      })
      await restoreDb.drop()
      // then
      expect(exported.code).toBe(0)
      const e = exported.json<{ sessions: number; events: number }>()
      expect(e.sessions).toBe(2)
      const lines = (await readFile(file, 'utf8')).trim().split('\n')
      expect(JSON.parse(lines[0] ?? '{}')).toMatchObject({ format: 'turnlog-export' })
      expect(JSON.parse(lines.at(-1) ?? '{}')).toMatchObject({ kind: 'end', sessions: 2, events: e.events })
      expect(imported.code).toBe(0)
      expect(imported.json()).toMatchObject({ format: 'turnlog', detected: true, sessions: 2, eventsWritten: 0, eventsSkipped: e.events })
      expect(restored.code).toBe(0)
      expect(restored.json()).toMatchObject({ sessions: 2, eventsWritten: e.events, eventsSkipped: 0 })
      expect(restoredLive.json()).toEqual(originalLive.json())
      expect(restoredAudit.code).toBe(0)
    },
    SLOW,
  )

  it(
    'import reads OpenAI-format JSONL (idempotently) and a hermes state.db',
    async () => {
      // given
      const chat = join(dir, 'chat.jsonl')
      await writeFile(chat, ['{"role":"user","content":"hi"}', '{"role":"assistant","content":"hello"}', ''].join('\n'))
      const hermes = join(dir, 'state.db')
      const sqlite = new Database(hermes)
      sqlite.exec(`create table sessions (id text primary key, source text, parent_session_id text, started_at real not null, ended_at real, end_reason text, title text, message_count integer);
      create table messages (id integer primary key autoincrement, session_id text not null, role text not null, content text, tool_call_id text,
        tool_calls text, tool_name text, timestamp real not null, token_count integer, finish_reason text, active integer not null default 1, compacted integer not null default 0);
      insert into sessions (id, source, started_at, title) values ('20250101_120000_abc', 'cli', 1735732800, 'hermes session');
      insert into messages (session_id, role, content, timestamp) values ('20250101_120000_abc', 'user', 'list files', 1735732801);
      insert into messages (session_id, role, content, tool_calls, timestamp, finish_reason) values ('20250101_120000_abc', 'assistant', '', '[{"id":"call_1","type":"function","function":{"name":"ls","arguments":"{}"}}]', 1735732802, 'tool_calls');
      insert into messages (session_id, role, content, tool_call_id, tool_name, timestamp) values ('20250101_120000_abc', 'tool', 'a.txt', 'call_1', 'ls', 1735732803);
      insert into messages (session_id, role, content, timestamp, finish_reason) values ('20250101_120000_abc', 'assistant', 'One file: a.txt', 1735732804, 'stop');`)
      sqlite.close()
      // when
      const first = await pgRun(['import', chat, '--json'])
      const again = await pgRun(['import', chat, '--format', 'openai-jsonl', '--json'])
      const fromHermes = await pgRun(['import', hermes, '--json'])
      const wrongFlag = await pgRun(['import', hermes, '--session', parent])
      const missing = await pgRun(['import', join(dir, 'nope.jsonl')])
      // then
      expect(first.code).toBe(0)
      const t = first.json<{ sessionId: string; appended: number; format: string }>()
      expect(t).toMatchObject({ format: 'openai-jsonl', appended: 2 })
      expect(again.json()).toMatchObject({ sessionId: t.sessionId, appended: 0, duplicates: 2 })
      expect(fromHermes.code).toBe(0)
      const h = fromHermes.json<{ format: string; sessions: { sessionId: string; appended: number; liveMatches: boolean }[] }>()
      expect(h.format).toBe('hermes')
      expect(h.sessions).toHaveLength(1)
      expect(h.sessions[0]).toMatchObject({ appended: 4, liveMatches: true })
      const replayed = (await pgRun(['replay', h.sessions[0]?.sessionId ?? '', '--json'])).json<{
        messages: Message[]
        pairing: { ok: boolean }
      }>()
      expect(replayed.messages.map((m) => m.payload.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
      expect(replayed.pairing.ok).toBe(true)
      expect(wrongFlag.code).toBe(2)
      expect(missing.code).toBe(2)
      expect(missing.stderr).toMatch(/error FILE_NOT_FOUND/)
    },
    SLOW,
  )

  it(
    'inspect writes a self-contained HTML timeline',
    async () => {
      // when
      const file = join(dir, 'parent.html')
      const run = await pgRun(['inspect', parent, '--html', file, '--json'])
      // then
      expect(run.code).toBe(0)
      expect(run.json()).toMatchObject({ sessionId: parent, findings: 0 })
      const html = await readFile(file, 'utf8')
      expect(html).toMatch(/^<!doctype html>/)
      expect(html).toContain('<script type="application/json" id="turnlog-data">')
      expect(html).not.toMatch(/<(link|img|iframe)\b|src=|https?:\/\//)
    },
    SLOW,
  )

  it(
    'a server that is not there: exit 3, the code, and a hint that says what to do',
    async () => {
      // when
      const down = await runTurnlog(['--database-url', 'postgresql://postgres:s3cret@127.0.0.1:1/turnlog', 'sessions'], { cwd: dir })
      const downJson = await runTurnlog(['sessions', '--json'], {
        cwd: dir,
        env: { TURNLOG_DATABASE_URL: 'postgresql://postgres@127.0.0.1:1/turnlog' },
      })
      const notAUrl = await runTurnlog(['--database-url', 'mysql://x', 'sessions'], { cwd: dir })
      const both = await runTurnlog(['--database-url', url, '--data-dir', dir, 'sessions'], { cwd: dir })
      // then
      expect(down.code).toBe(3)
      expect(down.stdout).toBe('')
      expect(down.stderr).toMatch(/error DB_TRANSIENT: connection failure/)
      expect(down.stderr).toMatch(/hint: Nothing accepts connections at postgresql:\/\/postgres:\*\*\*@127\.0\.0\.1:1\/turnlog/)
      expect(down.stderr).not.toContain('s3cret')
      expect(downJson.code).toBe(3)
      expect(downJson.json<{ error: { code: string; hint: string } }>().error).toMatchObject({
        code: 'DB_TRANSIENT',
        hint: expect.stringMatching(/TURNLOG_DATABASE_URL/),
      })
      expect(notAUrl.code).toBe(2)
      expect(both.code).toBe(2)
      expect(both.stderr).toMatch(/mutually exclusive/)
    },
    SLOW,
  )
})
