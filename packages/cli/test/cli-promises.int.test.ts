/**
 * docs/cli.md, the promises no other CLI test pinned down (an audit of the document, promise by
 * promise): each test quotes what it holds the built `turnlog` binary to, run as a child process
 * against real Postgres (a database of its own) and real embedded directories that must stay absent.
 *
 * - `--json`: every failure, usage errors included, prints `{"error": {code, message, hint, cause,
 *   details}}` on stdout and a human message on stderr; a success leaves stderr empty; global options
 *   may come before or after the command.
 * - `--database-url` with `--data-dir` is a usage error; the URL variables come after both options,
 *   `TURNLOG_DATABASE_URL` before `DATABASE_URL`; printed URLs hide the password.
 * - Every read-only command on an embedded directory that does not exist or is empty fails with
 *   `DATABASE_NOT_FOUND` (exit 2) and creates nothing.
 * - `migrate --roles-sql` connects to nothing; `migrate --json` is `{ database: { kind, where }, applied, known }`.
 * - A read-only role runs `sessions`, `replay`, `audit`, `export`, `inspect` and `rebuild --verify`;
 *   `rebuild` (it rewrites projections) and `tail` (it keeps a checkpoint) need `turnlog_writer`.
 * - `export`: a failed export leaves no file; `-o -` writes the export to stdout (not with `--json`).
 * - `import`: a missing file, an undetectable format, `--session` with an export are usage errors
 *   (exit 2); an export whose chain does not verify is `IMPORT_FAILED` (exit 3) and writes nothing.
 * - `audit`: exactly one of a session or `--all`; `--transcript` is for one session; `--fail-on` at or over.
 * - Connection failures get specific hints (a database that does not exist, a host that does not resolve).
 * - `tail`: connects as `application_name = turnlog-cli`; under `--json` a failure (a name another
 *   consumer holds) ends the stream with the error document as its last line, exit 3.
 */
import { existsSync, readFileSync } from 'node:fs'
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import pg from 'pg'
import { runTurnlog, type TurnlogRun } from './support/run-turnlog.js'
import { spawnTurnlog } from './support/spawn-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

/** Per-test timeout: each test spawns the binary several times, and a loaded CI runner is slow. */
const SLOW = 60_000

interface ErrorDocument {
  error: { code: string; message: string; hint: string | null; cause: string | null; details: Record<string, unknown> }
}

let db: TestDatabase
let dir: string
let url: string
/** A session with two user messages in a row (one `consecutive_user_messages` warning) and a reply. */
let warned: SessionId
let healthy: SessionId

useDatabaseAndDir('turnlog-cli-promises-', (made) => {
  ;({ db, dir } = made)
  url = db.connectionString
})

const pgRun = (args: string[]): Promise<TurnlogRun> => runTurnlog(['--database-url', url, ...args], { cwd: dir })

/** The error document of a failed `--json` run, checked to have exactly the documented keys. */
function errorDocument(run: TurnlogRun): ErrorDocument['error'] {
  const doc = run.json<ErrorDocument>()
  expect(Object.keys(doc)).toEqual(['error'])
  expect(Object.keys(doc.error).sort()).toEqual(['cause', 'code', 'details', 'hint', 'message'])
  expect(typeof doc.error.message).toBe('string')
  expect(typeof doc.error.details).toBe('object')
  return doc.error
}

/** Runs SQL as the test server's superuser on the suite's database. */
async function superuser<T>(fn: (client: pg.Client) => Promise<T>, database = url): Promise<T> {
  const client = new pg.Client({ connectionString: database })
  await client.connect()
  try {
    return await fn(client)
  } finally {
    await client.end()
  }
}

describe('docs/cli.md, promise by promise', () => {
  it(
    '--json: a usage error too prints {"error": {code, message, hint, cause, details}} on stdout and a human message on stderr (exit 2)',
    async () => {
      // given command lines commander itself refuses, and one the CLI refuses
      const lines = [
        ['--json', 'sessions', '--limit', '0'],
        ['--json', 'frobnicate'],
        ['sessions', '--bogus', '--json'],
        ['--json'],
        ['--json', '--database-url', 'postgresql://x@127.0.0.1:1/x', '--data-dir', 'dd', 'sessions'],
      ]
      // when
      const runs = await Promise.all(lines.map((args) => runTurnlog(args, { cwd: dir })))
      for (const [i, run] of runs.entries()) {
        const args = lines[i]
        // then
        expect({ args, code: run.code }).toEqual({ args, code: 2 })
        expect(errorDocument(run).code).toBe('USAGE')
        expect(run.stdout.trim().split('\n')).toHaveLength(1)
        expect(run.stderr).not.toBe('')
      }
      // and nothing was created where the refused command would have looked
      expect(existsSync(join(dir, 'dd'))).toBe(false)
      expect(existsSync(join(dir, '.turnlog'))).toBe(false)
    },
    SLOW,
  )

  it(
    'migrate --json is { database: { kind, where }, applied, known } with the password hidden; global options go before or after the command',
    async () => {
      // given a URL with a password (the test server trusts the connection, so any password does)
      const secretUrl = new URL(url)
      secretUrl.password = 'hunter2-secret'
      // when
      const first = await runTurnlog(['--json', '--database-url', secretUrl.href, 'migrate'], { cwd: dir })
      const [again, human] = await Promise.all([
        runTurnlog(['migrate', '--database-url', secretUrl.href, '--json'], { cwd: dir }),
        runTurnlog(['--database-url', secretUrl.href, 'migrate'], { cwd: dir }),
      ])
      // then
      expect(first.code).toBe(0)
      const doc = first.json<{ database: { kind: string; where: string }; applied: string[]; known: string[] }>()
      expect(Object.keys(doc)).toEqual(['database', 'applied', 'known'])
      expect(doc.database.kind).toBe('postgres')
      expect(doc.database.where).toContain(':***@')
      expect(doc.known).toEqual([
        '0001_create_schema',
        '0002_compute_append_links',
        '0003_accept_duplicates_without_content',
        '0004_repair_compaction_placement',
        '0005_tenant_subscriptions',
        '0006_check_fork_copies',
        '0007_read_appends_only_sessions',
        '0008_check_redaction_placeholders',
        '0009_keep_custom_tool_calls',
        '0010_hide_foreign_predecessors',
      ])
      expect(doc.applied).toEqual(doc.known)
      expect(again.json<{ applied: string[] }>().applied).toEqual([])
      expect(first.stderr + again.stderr).toBe('')
      expect(human.stderr).toContain('turnlog: database: Postgres')
      expect(human.stderr).toContain(':***@')
      expect(human.stdout).toContain(`schema is up to date (${doc.known.length} migration(s))`)
      for (const run of [first, again, human]) expect(run.stdout + run.stderr).not.toContain('hunter2-secret')

      // and: seed the sessions the other tests read
      const store = await openStore({ connectionString: url, migrate: false })
      try {
        warned = await store.createSession()
        await store.append(warned, [
          createMessage({ role: 'user', content: 'first' }),
          createMessage({ role: 'user', content: 'second, before any reply' }),
          createMessage({ role: 'assistant', content: 'a reply' }),
        ])
        healthy = await store.createSession()
        await store.append(healthy, [
          createMessage({ role: 'user', content: 'hi' }),
          createMessage({ role: 'assistant', content: 'hello' }),
        ])
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it(
    'migrate --roles-sql connects to nothing: the SQL for a DBA, granting turnlog_owner to the URL login ({ rolesSql, migrator } under --json)',
    async () => {
      // given a URL where nothing listens
      const nowhere = 'postgresql://app_owner:pw@127.0.0.1:1/app'
      // when
      const [json, text] = await Promise.all([
        runTurnlog(['--database-url', nowhere, 'migrate', '--roles-sql', '--json'], { cwd: dir }),
        runTurnlog(['--database-url', nowhere, 'migrate', '--roles-sql'], { cwd: dir }),
      ])
      // then
      expect(json.code).toBe(0)
      const doc = json.json<{ rolesSql: string; migrator: string | null }>()
      expect(Object.keys(doc)).toEqual(['rolesSql', 'migrator'])
      expect(doc.migrator).toBe('app_owner')
      for (const role of ['turnlog_owner', 'turnlog_writer', 'turnlog_reader']) expect(doc.rolesSql).toContain(`create role ${role}`)
      expect(doc.rolesSql).toContain('grant turnlog_owner to "app_owner"')
      expect(text.code).toBe(0)
      expect(text.stdout.trim()).toBe(doc.rolesSql.trim())
    },
    SLOW,
  )

  it(
    'every read-only command on a missing or empty embedded directory: DATABASE_NOT_FOUND, exit 2, nothing created',
    async () => {
      // given a directory that does not exist and one that is empty
      const missing = join(dir, 'no-such-db')
      const empty = join(dir, 'empty-db')
      await mkdir(empty)
      const session = '0190c5e2-7b1c-7a33-9f00-1234567890ab'
      const commands = [
        ['sessions'],
        ['replay', session],
        ['audit', '--all'],
        ['export', '--all', '-o', 'out.jsonl'],
        ['inspect', session, '--html', 'out.html'],
        ['rebuild'],
        ['rebuild', '--verify'],
        ['tail', '--limit', '1'],
      ]
      const cases = [
        ...commands.map((c) => [missing, c] as const),
        [empty, ['sessions']] as const,
        [empty, ['rebuild', '--verify']] as const,
      ]
      // when
      const runs = await Promise.all(
        cases.map(([dataDir, command]) => runTurnlog(['--data-dir', dataDir, ...command, '--json'], { cwd: dir })),
      )
      for (const [i, run] of runs.entries()) {
        const command = cases[i]?.[1]
        // then
        expect({ command, code: run.code }).toEqual({ command, code: 2 })
        expect(errorDocument(run).code).toBe('DATABASE_NOT_FOUND')
      }
      // and nothing was created: no directory, no file, no output, no lock
      expect(existsSync(missing)).toBe(false)
      expect(await readdir(empty)).toEqual([])
      expect((await readdir(dir)).filter((name) => name.startsWith('out.'))).toEqual([])
    },
    SLOW,
  )

  it(
    '--data-dir beats the URL variables, TURNLOG_DATABASE_URL beats DATABASE_URL, and each run names its source',
    async () => {
      // given a DATABASE_URL where nothing listens
      const nowhere = 'postgresql://x@127.0.0.1:1/x'
      // when
      const [both, dataDir] = await Promise.all([
        runTurnlog(['sessions'], { cwd: dir, env: { TURNLOG_DATABASE_URL: url, DATABASE_URL: nowhere } }),
        runTurnlog(['--data-dir', join(dir, 'absent'), 'sessions'], { cwd: dir, env: { TURNLOG_DATABASE_URL: url, DATABASE_URL: url } }),
      ])
      // then
      expect(both.code).toBe(0)
      expect(both.stderr).toMatch(/database: Postgres .* \(TURNLOG_DATABASE_URL\)/)
      expect(both.stdout).toContain(warned)
      expect(dataDir.code).toBe(2)
      expect(dataDir.stderr).toMatch(/database: embedded .*absent \(--data-dir\)/)
      expect(dataDir.stderr).toContain('DATABASE_NOT_FOUND')
    },
    SLOW,
  )

  it(
    'a read-only role runs sessions, replay, audit, export, inspect and rebuild --verify; rebuild and tail need turnlog_writer',
    async () => {
      // given a login that is only a turnlog_reader, and one that is a turnlog_writer
      const suffix = db.name.replace(/^turnlog_test_/, '')
      const reader = `cli_promises_reader_${suffix}`
      const writer = `cli_promises_writer_${suffix}`
      await superuser(async (c) => {
        await c.query(`create role ${reader} login in role turnlog_reader`)
        await c.query(`create role ${writer} login in role turnlog_writer`)
      })
      const as = (login: string): string => {
        const u = new URL(url)
        u.username = login
        u.password = ''
        return u.href
      }
      try {
        // when
        const readOnly = [
          ['sessions'],
          ['replay', warned],
          ['audit', '--all', '--fail-on', 'critical'],
          ['export', '--all', '-o', join(dir, 'reader.jsonl')],
          ['inspect', warned, '--html', join(dir, 'reader.html')],
          ['rebuild', '--verify'],
        ]
        const tailArgs = ['tail', '--from', 'start', '--limit', '1', '--json']
        const [rebuild, tail, writerRebuild, writerTail, ...reads] = await Promise.all([
          runTurnlog(['--database-url', as(reader), 'rebuild', '--json'], { cwd: dir }),
          runTurnlog(['--database-url', as(reader), ...tailArgs], { cwd: dir }),
          runTurnlog(['--database-url', as(writer), 'rebuild', '--json'], { cwd: dir }),
          runTurnlog(['--database-url', as(writer), ...tailArgs], { cwd: dir }),
          ...readOnly.map((args) => runTurnlog(['--database-url', as(reader), ...args, '--json'], { cwd: dir })),
        ])
        // then
        for (const [i, run] of reads.entries()) {
          const args = readOnly[i]
          expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' })
        }
        expect(rebuild.code).toBe(3)
        expect(errorDocument(rebuild)).toMatchObject({ code: 'PERMISSION_DENIED', details: { sqlState: '42501' } })
        expect(tail.code).toBe(3)
        expect(errorDocument(tail).code).toBe('PERMISSION_DENIED')
        expect(writerRebuild.code).toBe(0)
        expect(writerRebuild.json()).toMatchObject({ verify: false, sessions: 2, rewritten: 2, drift: [] })
        expect(writerTail.code).toBe(0)
        expect(JSON.parse(writerTail.stdout)).toMatchObject({ seq: 1, type: 'message_appended' })
      } finally {
        await superuser(async (c) => {
          // the writer's tail removed its ephemeral subscription; drop the logins
          await c.query(`drop role if exists ${reader}`)
          await c.query(`drop role if exists ${writer}`)
        })
      }
    },
    SLOW,
  )

  it(
    'export: a failed export leaves no file; -o - writes the export to stdout and is refused with --json; bytes is the size written',
    async () => {
      // given
      const before = await readdir(dir)
      const file = join(dir, 'one.jsonl')
      // when
      const [missing, refused] = await Promise.all([
        pgRun(['export', '0190c5e2-7b1c-7a33-9f00-1234567890ab', '-o', 'missing.jsonl', '--json']),
        pgRun(['export', warned, '-o', 'refused.jsonl', '-o', '-', '--json']),
      ])
      const left = (await readdir(dir)).filter((name) => !before.includes(name))
      const [toStdout, toFile] = await Promise.all([pgRun(['export', warned, '-o', '-']), pgRun(['export', warned, '-o', file, '--json'])])
      // then: the failures left no file, complete or partial
      expect(missing.code).toBe(2)
      expect(errorDocument(missing).code).toBe('SESSION_NOT_FOUND')
      expect(refused.code).toBe(2)
      expect(errorDocument(refused).code).toBe('USAGE')
      expect(left).toEqual([])
      expect(toStdout.code).toBe(0)
      const lines = toStdout.stdout.trim().split('\n')
      expect(JSON.parse(lines[0] as string)).toMatchObject({ format: 'turnlog-export' })
      expect(JSON.parse(lines.at(-1) as string)).toMatchObject({ kind: 'end', sessions: 1, events: 3 })
      expect(toStdout.stderr).toMatch(/exported 1 session\(s\), 3 event\(s\)/)
      expect(toFile.code).toBe(0)
      const doc = toFile.json<{ file: string; sessions: number; events: number; bytes: number; conflictsNotExported: number }>()
      expect(doc).toEqual({ file, sessions: 1, events: 3, bytes: (await stat(file)).size, conflictsNotExported: 0 })
      // the same lines but the header's `exportedAt`
      const body = (text: string): string => text.slice(text.indexOf('\n'))
      expect(body(await readFile(file, 'utf8'))).toBe(body(toStdout.stdout))
    },
    SLOW,
  )

  it(
    'import: a missing file, an undetectable format, --session with an export are usage errors; a chain that does not verify is IMPORT_FAILED, nothing written',
    async () => {
      // given an export of one session, a copy with one event's payload changed, and a text file
      const exported = join(dir, 'import-source.jsonl')
      expect((await pgRun(['export', healthy, '-o', exported])).code).toBe(0)
      const lines = readFileSync(exported, 'utf8').trim().split('\n')
      const tampered = lines.map((line) => line.replace('"content":"hello"', '"content":"hellO"'))
      expect(tampered).not.toEqual(lines)
      await writeFile(join(dir, 'tampered.jsonl'), `${tampered.join('\n')}\n`)
      await writeFile(join(dir, 'notes.txt'), 'just some notes\n')
      const fresh = await createTestDatabase()
      const freshRun = (args: string[]): Promise<TurnlogRun> =>
        runTurnlog(['--database-url', fresh.connectionString, ...args], { cwd: dir })
      try {
        // when
        const [missingFile, undetectable, sessionWithExport, bad] = await Promise.all([
          freshRun(['import', 'no-such-file.jsonl', '--json']),
          freshRun(['import', 'notes.txt', '--json']),
          freshRun(['import', exported, '--session', healthy, '--json']),
          freshRun(['import', 'tampered.jsonl', '--json']),
        ])
        const sessions = await freshRun(['sessions', '--json'])
        const good = await freshRun(['import', exported, '--json'])
        // then
        expect(missingFile.code).toBe(2)
        expect(errorDocument(missingFile).code).toBe('FILE_NOT_FOUND')
        expect(undetectable.code).toBe(2)
        expect(errorDocument(undetectable)).toMatchObject({ code: 'USAGE', hint: expect.stringContaining('--format') })
        expect(sessionWithExport.code).toBe(2)
        expect(errorDocument(sessionWithExport).code).toBe('USAGE')
        expect(bad.code).toBe(3)
        expect(errorDocument(bad)).toMatchObject({ code: 'IMPORT_FAILED', message: expect.stringMatching(/line \d+/) })
        expect(sessions.json<{ sessions: unknown[] }>().sessions).toEqual([])
        expect(good.code).toBe(0)
        expect(good.json()).toMatchObject({ file: exported, format: 'turnlog', detected: true, sessions: 1, eventsWritten: 2 })
      } finally {
        await fresh.drop()
      }
    },
    SLOW,
  )

  it(
    'audit: exactly one of a session or --all, --transcript for one session only; --fail-on exits 1 at or over its severity; JSON formatVersion 1',
    async () => {
      // given a transcript file
      await writeFile(join(dir, 'seen.jsonl'), '{"role":"user","content":"first"}\n')
      // when
      const levels = ['info', 'warning', 'error', 'critical']
      const [neither, both, transcriptAll, missingTranscript, defaultLevel, ...leveled] = await Promise.all([
        pgRun(['audit', '--json']),
        pgRun(['audit', warned, '--all', '--json']),
        pgRun(['audit', '--all', '--transcript', 'seen.jsonl', '--json']),
        pgRun(['audit', warned, '--transcript', 'no-such.jsonl', '--json']),
        pgRun(['audit', '--all', '--json']),
        ...levels.map((level) => pgRun(['audit', warned, '--fail-on', level])),
      ])
      const byLevel = Object.fromEntries(leveled.map((run, i) => [levels[i], run.code]))
      // then
      for (const run of [neither, both, transcriptAll]) {
        expect(run.code).toBe(2)
        expect(errorDocument(run).code).toBe('USAGE')
      }
      expect(missingTranscript.code).toBe(2)
      expect(errorDocument(missingTranscript).code).toBe('FILE_NOT_FOUND')
      // the session's one finding is a warning
      expect(byLevel).toEqual({ info: 1, warning: 1, error: 0, critical: 0 })
      expect(defaultLevel.code).toBe(0)
      const report = defaultLevel.json<{ formatVersion: number; findings: { kind: string; severity: string }[] }>()
      expect(report.formatVersion).toBe(1)
      expect(report.findings.map((f) => [f.kind, f.severity])).toEqual([['consecutive_user_messages', 'warning']])
    },
    SLOW,
  )

  it(
    'the documented JSON shapes of replay (live, transcript, wire), inspect and rebuild (with drift)',
    async () => {
      // when
      const [live, transcript, wire, inspect] = await Promise.all([
        pgRun(['replay', warned, '--json']),
        pgRun(['replay', warned, '--view', 'transcript', '--json']),
        pgRun(['replay', warned, '--view', 'wire', '--json']),
        pgRun(['inspect', warned, '--html', join(dir, 'shapes.html'), '--json']),
      ])
      // and once a projection row was deleted behind the store's back
      await superuser((c) =>
        c.query(
          'delete from turnlog.live_messages where session_id = $1 and position = (select max(position) from turnlog.live_messages where session_id = $1)',
          [warned],
        ),
      )
      const verify = await pgRun(['rebuild', '--verify', '--json'])
      const repair = await pgRun(['rebuild', '--json'])
      // then
      const keys = (run: TurnlogRun): string[] => Object.keys(run.json())
      expect(keys(live)).toEqual(['sessionId', 'version', 'view', 'messages', 'pairing'])
      expect(keys(transcript)).toEqual(['sessionId', 'version', 'view', 'entries', 'events', 'pairing', 'anomalies'])
      const entries = transcript.json<{ entries: Record<string, unknown>[] }>().entries
      expect(entries.map((e) => Object.keys(e))).toEqual(entries.map(() => ['seq', 'revision', 'status', 'changedBy', 'message']))
      expect(keys(wire)).toEqual(['sessionId', 'version', 'view', 'messages'])
      expect(wire.json<{ messages: unknown[] }>().messages).toEqual([
        { role: 'user', content: 'first' },
        { role: 'user', content: 'second, before any reply' },
        { role: 'assistant', content: 'a reply' },
      ])
      expect(inspect.json()).toEqual({
        file: join(dir, 'shapes.html'),
        bytes: (await stat(join(dir, 'shapes.html'))).size,
        sessionId: warned,
        version: 3,
        items: 3,
        messages: 3,
        findings: expect.any(Number),
      })
      expect(verify.code).toBe(1)
      const drift = verify.json<{ drift: Record<string, unknown>[] }>()
      expect(Object.keys(drift)).toEqual(['verify', 'sessions', 'rewritten', 'drift'])
      expect(drift.drift.map((d) => [d['sessionId'], Object.keys(d)])).toEqual([
        [warned, ['sessionId', 'expected', 'actual', 'explanation']],
      ])
      expect(repair.code).toBe(0)
      // without --verify, every session is rewritten and `drift` names those that had drifted (repaired)
      const repaired = repair.json<{ verify: boolean; sessions: number; rewritten: number; drift: { sessionId: string }[] }>()
      expect(repaired).toMatchObject({ verify: false, sessions: 2, rewritten: 2 })
      expect(repaired.drift.map((d) => d.sessionId)).toEqual([warned])
    },
    SLOW,
  )

  it(
    'connection failures exit 3 with a specific hint: a database that does not exist, a host that does not resolve',
    async () => {
      // given
      const noDatabase = new URL(url)
      noDatabase.pathname = `/${db.name}_absent`
      // when
      const [absent, unresolved] = await Promise.all([
        runTurnlog(['--database-url', noDatabase.href, 'sessions', '--json'], { cwd: dir }),
        runTurnlog(['--database-url', 'postgresql://x@turnlog-no-such-host.invalid/x', 'sessions', '--json'], { cwd: dir }),
      ])
      // then
      expect(absent.code).toBe(3)
      expect(errorDocument(absent)).toMatchObject({ details: { sqlState: '3D000' }, hint: expect.stringContaining('does not exist') })
      expect(unresolved.code).toBe(3)
      expect(errorDocument(unresolved).hint).toMatch(/does not resolve/)
    },
    SLOW,
  )

  it(
    'tail connects as turnlog-cli; under --json a name another consumer holds ends the stream with the error document, exit 3',
    async () => {
      // given a durable tail running
      const holder = spawnTurnlog(['--database-url', url, 'tail', '--name', 'promises-held', '--from', 'start'], { cwd: dir })
      try {
        await holder.waitForLines(1)
        // when
        const applications = await superuser(
          async (c) =>
            (
              await c.query<{ application_name: string }>(
                'select distinct application_name from pg_stat_activity where datname = $1 and pid <> pg_backend_pid() order by 1',
                [db.name],
              )
            ).rows,
        )
        const rival = await pgRun(['tail', '--name', 'promises-held', '--json'])
        // then
        // the command's pool, and the subscription's own connection, named after it
        expect(applications.map((r) => r.application_name).sort()).toEqual(['turnlog subscription promises-held', 'turnlog-cli'])
        expect(rival.code).toBe(3)
        const last = rival.stdout.trim().split('\n').at(-1) as string
        expect(JSON.parse(last)).toMatchObject({ error: { code: 'SUBSCRIPTION_LOCKED' } })
        expect(rival.stderr).toContain('SUBSCRIPTION_LOCKED')
      } finally {
        holder.child.kill('SIGTERM')
      }
      const stopped = await holder.exit()
      expect(stopped.code).toBe(0)
      // and the durable name's checkpoint stays
      const kept = await superuser(
        async (c) => (await c.query('select name from turnlog.subscriptions where name = $1', ['promises-held'])).rowCount,
      )
      expect(kept).toBe(1)
    },
    SLOW,
  )

  it(
    'tail stops with exit 0 at its next write once the reader of stdout has gone away, and removes its ephemeral subscription',
    async () => {
      // given a tail following what commits from now on
      const tailNames = async (): Promise<string[]> =>
        superuser(
          async (c) => (await c.query<{ name: string }>("select name from turnlog.subscriptions where name like 'turnlog-tail-%'")).rows,
        ).then((rows) => rows.map((r) => r.name))
      const tail = spawnTurnlog(['--database-url', url, 'tail', '--json'], { cwd: dir })
      const deadline = Date.now() + 20_000
      while ((await tailNames()).length === 0) {
        if (Date.now() > deadline) throw new Error(`the tail never subscribed:\n${tail.stderr()}`)
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      // when its reader goes away and events commit
      tail.child.stdout?.destroy()
      const store = await openStore({ connectionString: url, migrate: false })
      try {
        await store.append(healthy, [createMessage({ role: 'user', content: 'nobody reads this' })])
        await new Promise((resolve) => setTimeout(resolve, 300))
        await store.append(healthy, [createMessage({ role: 'user', content: 'nor this' })])
      } finally {
        await store.close()
      }
      const stopped = await tail.exit(20_000)
      // then
      expect({ code: stopped.code, signal: stopped.signal }).toEqual({ code: 0, signal: null })
      expect(await tailNames()).toEqual([])
    },
    SLOW,
  )

  it('-V prints the version of @turnlog/cli', async () => {
    const run = await runTurnlog(['-V'], { cwd: dir })
    const pkg = JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }
    expect(run.code).toBe(0)
    expect(run.stdout.trim()).toBe(pkg.version)
  })
})
