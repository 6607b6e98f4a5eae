/**
 * docs/cli.md under a second adversarial pass (an operator replaying logs, an engineer auditing an
 * incident at 3 a.m.), each held against the built `turnlog` binary run as a child process on real
 * Postgres (databases of its own) and real files. What the other CLI tests pin down is not repeated.
 *
 * - "Printed URLs have their password replaced by `***`": regression, a password in the URL's query
 *   (`?password=…`, which node-postgres reads), in a keyword string given by mistake
 *   (`host=db password=…`) or in a URL that does not parse (a `/` left unencoded in the password) was
 *   printed as it is, on stderr and in the `--json` error document. A URL that does not parse was a
 *   `DB_ERROR` "Invalid URL" (exit 3, no hint); it is a usage error (exit 2) that says what to encode.
 * - "Connection failures get specific hints: … a timeout, refused credentials (SQLSTATE 28xxx)":
 *   regression, a server that accepts the connection and never answers (node-postgres gives up after
 *   the CLI's 10 s connect timeout) got the generic "The connection … failed" hint; it is "did not
 *   answer in time" now. A role the server does not know gets the credentials hint.
 * - "Every failure prints … the message, the underlying cause": regression, the cause of a malformed
 *   import line quotes the line (JSON.parse), and a hostile file's escape sequences reached the
 *   operator's terminal raw on stderr (set its title, cleared the screen); they are shown escaped.
 * - `import` of a turnlog export with CRLF line endings (a file that went through Windows) verifies
 *   and imports as the LF file. A gzip'd export is a usage error (docs: decompress it into a pipe).
 * - "`--json`: exactly one JSON document on stdout": regression, `turnlog import -- --json` (a file
 *   named `--json`, after the `--` separator) ran in human mode yet printed its failure as a JSON
 *   document on stdout too; `--json` after `--` is an operand now.
 * - `import` stopped by SIGTERM mid-way ("each session all-or-nothing"): the sessions of committed
 *   batches are whole, nothing of the batch in progress is written, no success is reported; the same
 *   import run again finishes (idempotent) and the audit is clean. A gate (a trigger waiting on an
 *   advisory lock the test holds) stops the import at a known session, no sleeps.
 *
 * The regressions are also run in-process through `runCli` of the sources (last block), so that
 * the mutation check, which runs tests without rebuilding `dist`, sees a mutant of `packages/cli/src`.
 */
import { createServer, type Server, type Socket } from 'node:net'
import { writeFile } from 'node:fs/promises'
import { gzipSync } from 'node:zlib'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { exportSessions } from '@turnlog/audit'
import { createMessage, type SessionId } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import pg from 'pg'
import { runTurnlog, type TurnlogRun } from './support/run-turnlog.js'
import { runCliInProcess, type InProcessRun } from './support/run-cli-in-process.js'
import { spawnTurnlog } from './support/spawn-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const SLOW = 120_000

interface ErrorDocument {
  error: { code: string; message: string; hint: string | null; cause: string | null }
}

let db: TestDatabase
let dir: string
/** The source sessions, in export order (by id), and the export of all of them. */
let ids: SessionId[] = []
const lines: string[] = []
/** Events per source session. */
const EVENTS_PER_SESSION = 10
/** More sessions than one import batch holds (200 sessions or 2,000 events), so that a batch commits before the gate. */
const SESSIONS = 250

useDatabaseAndDir('turnlog-cli-adversarial-', (made) => ({ db, dir } = made))

beforeAll(async () => {
  const store = await openStore({ connectionString: db.connectionString })
  try {
    for (let s = 0; s < SESSIONS; s++) {
      const id = await store.createSession({ metadata: { n: s } })
      await store.append(
        id,
        Array.from({ length: EVENTS_PER_SESSION }, (_, i) =>
          createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `s${s} m${i}` }),
        ),
      )
    }
    for await (const line of exportSessions(store, { all: true })) lines.push(line)
  } finally {
    await store.close()
  }
  ids = lines.filter((l) => l.startsWith('{"kind":"session"')).map((l) => (JSON.parse(l) as { id: SessionId }).id)
  await writeFile(join(dir, 'all.jsonl'), `${lines.join('\n')}\n`)
}, SLOW)

/** The code points of `text` a terminal would act on (C0 but the line feed, DEL, C1, the RLO override). */
function rawControls(text: string): number[] {
  return [...text].map((ch) => ch.codePointAt(0) ?? 0).filter((c) => (c < 0x20 && c !== 0x0a) || (c >= 0x7f && c < 0xa0) || c === 0x202e)
}

/** Runs a SQL query on `database` with a client of its own. */
async function sql<R extends pg.QueryResultRow>(database: TestDatabase, text: string, values: unknown[] = []): Promise<R[]> {
  const client = new pg.Client({ connectionString: database.connectionString })
  await client.connect()
  try {
    return (await client.query<R>(text, values)).rows
  } finally {
    await client.end()
  }
}

/** Each session of `database` with its event count. */
async function eventCounts(database: TestDatabase): Promise<Map<string, number>> {
  const rows = await sql<{ id: string; n: string }>(
    database,
    'select s.session_id::text as id, (select count(*) from turnlog.events e where e.session_id = s.session_id) as n from turnlog.sessions s',
  )
  return new Map(rows.map((r) => [r.id, Number(r.n)]))
}

describe('printed database URLs', () => {
  it(
    'hide a password given in the query, in a keyword string or in a URL that does not parse (which is a usage error)',
    async () => {
      // given: nothing listens on port 1
      const cases: [string, number, string][] = [
        ['postgresql://postgres@127.0.0.1:1/postgres?sslmode=disable&password=hunter2-query', 3, 'DB_TRANSIENT'],
        ['host=127.0.0.1 user=postgres password=hunter2-keyword', 2, 'USAGE'],
        ['postgresql://app:hunter2/unencoded@127.0.0.1:1/app', 2, 'USAGE'],
      ]

      // when
      const runs = await Promise.all(
        cases.flatMap(([url]) => [
          runTurnlog(['--database-url', url, 'sessions'], { cwd: dir }),
          runTurnlog(['sessions', '--json'], { cwd: dir, env: { DATABASE_URL: url } }),
        ]),
      )

      // then
      for (const [k, [url, code, errorCode]] of cases.entries()) {
        const human = runs[2 * k] as TurnlogRun
        const json = runs[2 * k + 1] as TurnlogRun
        expect({ url, human: human.code, json: json.code }).toEqual({ url, human: code, json: code })
        expect({ url, out: `${human.stdout}${human.stderr}${json.stdout}${json.stderr}` }).not.toEqual({
          url,
          out: expect.stringContaining('hunter2'),
        })
        expect(json.json<ErrorDocument>().error.code).toBe(errorCode)
      }
      // the URL that does not parse says what to do about it
      expect((runs[5] as TurnlogRun).json<ErrorDocument>().error.hint).toMatch(/Percent-encode/)
    },
    SLOW,
  )
})

describe('connection failures', () => {
  let port: number
  useSilentServer((p) => (port = p))

  it(
    'a server that never answers gets the timeout hint after the connect timeout; an unknown role the credentials hint',
    async () => {
      // given: a role the server does not know (the test server trusts any password, so a wrong one would pass)
      const unknownRoleUrl = new URL(db.connectionString)
      unknownRoleUrl.username = 'no_such_role_xyz'
      unknownRoleUrl.password = 'pw'

      // when
      const [silent, unknownRole] = await Promise.all([
        runTurnlog(['--database-url', `postgresql://postgres:pw@127.0.0.1:${port}/app`, 'sessions', '--json'], { cwd: dir }),
        runTurnlog(['--database-url', unknownRoleUrl.toString(), 'sessions', '--json'], { cwd: dir }),
      ])

      // then
      expect(silent.code).toBe(3)
      expect(silent.json<ErrorDocument>().error).toMatchObject({
        code: 'DB_TRANSIENT',
        hint: expect.stringMatching(/did not answer in time/),
      })
      expect(unknownRole.code).toBe(3)
      expect(unknownRole.json<ErrorDocument>().error.hint).toMatch(/refused the credentials/)
    },
    SLOW,
  )
})

/** A server that accepts connections and never answers (a hung proxy, a half-dead host), on a free port. */
function useSilentServer(ready: (port: number) => void): void {
  let server: Server
  const sockets = new Set<Socket>()
  beforeAll(async () => {
    server = createServer((socket) => sockets.add(socket))
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    ready((server.address() as { port: number }).port)
  })
  afterAll(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
}

describe('turnlog import of hostile files', () => {
  let target: TestDatabase
  beforeAll(async () => {
    target = await createTestDatabase()
  })
  afterAll(async () => {
    await target.drop()
  })

  it(
    "shows a malformed line's escape sequences and bidi controls escaped in the error, never raw on the terminal",
    async () => {
      // given: line 1 sets the terminal's title, clears the screen and reverses what follows
      await writeFile(join(dir, 'hostile.jsonl'), '\u001b]0;PWNED\u0007\u001b[2J\u202e{"x":1}\n')

      // when
      const r = await runTurnlog(['--database-url', target.connectionString, 'import', 'hostile.jsonl', '--format', 'turnlog'], {
        cwd: dir,
      })

      // then
      expect(r.code).toBe(3)
      expect(r.stderr).toContain('error IMPORT_FAILED: line 1')
      expect(r.stderr).toContain('\\x1b]0;PWNED\\x07')
      expect(rawControls(r.stderr)).toEqual([])
    },
    SLOW,
  )

  it(
    "asks for a decompressed file when given a gzip'd export, and takes `--json` after `--` as a file name (no JSON on stdout)",
    async () => {
      // given
      await writeFile(join(dir, 'all.jsonl.gz'), gzipSync(`${lines.join('\n')}\n`))

      // when
      const gz = await runTurnlog(['--database-url', target.connectionString, 'import', 'all.jsonl.gz', '--json'], { cwd: dir })
      const operand = await runTurnlog(['--database-url', target.connectionString, 'import', '--', '--json'], { cwd: dir })

      // then
      expect(gz.code).toBe(2)
      expect(gz.json<ErrorDocument>().error.code).toBe('USAGE')
      expect(operand.code).toBe(2)
      expect(operand.stdout).toBe('')
      expect(operand.stderr).toContain(`error FILE_NOT_FOUND: no such file: ${join(dir, '--json')}`)
    },
    SLOW,
  )

  it(
    'reads an export with CRLF line endings as the LF file: every link verified, every event written',
    async () => {
      // given
      await writeFile(join(dir, 'crlf.jsonl'), `${lines.join('\r\n')}\r\n`)

      // when
      const r = await runTurnlog(['--database-url', target.connectionString, 'import', 'crlf.jsonl', '--json'], { cwd: dir })

      // then
      expect(r.code).toBe(0)
      expect(r.json()).toMatchObject({
        format: 'turnlog',
        detected: true,
        sessions: SESSIONS,
        eventsWritten: SESSIONS * EVENTS_PER_SESSION,
      })
      expect([...(await eventCounts(target)).values()].every((n) => n === EVENTS_PER_SESSION)).toBe(true)
    },
    SLOW,
  )
})

describe('turnlog import stopped by SIGTERM', () => {
  let target: TestDatabase
  beforeAll(async () => {
    target = await createTestDatabase()
    expect((await runTurnlog(['--database-url', target.connectionString, 'migrate'], { cwd: dir })).code).toBe(0)
  })
  afterAll(async () => {
    await target.drop()
  })

  it(
    'leaves the committed batches whole and nothing of the batch in progress; run again, it finishes',
    async () => {
      // given: a gate on the last session's events: its insert waits for an advisory lock the test holds
      const last = ids[ids.length - 1] as SessionId
      await sql(
        target,
        `create function public.import_gate() returns trigger language plpgsql as $$
         begin perform pg_advisory_xact_lock(424242); return new; end $$`,
      )
      await sql(
        target,
        `create trigger import_gate before insert on turnlog.events for each row
         when (new.session_id = '${last}'::uuid) execute function public.import_gate()`,
      )
      const gate = new pg.Client({ connectionString: target.connectionString })
      await gate.connect()
      await gate.query('select pg_advisory_lock(424242)')
      const child = spawnTurnlog(['--database-url', target.connectionString, 'import', 'all.jsonl', '--json'], { cwd: dir })
      try {
        // when: the import waits at the gate (its backend waits for the lock), and is sent SIGTERM
        for (;;) {
          const waiting = await sql<{ n: string }>(
            target,
            "select count(*) as n from pg_stat_activity where application_name = 'turnlog-cli' and wait_event_type = 'Lock' and datname = current_database()",
          )
          if (Number(waiting[0]?.n) > 0) break
          await new Promise((resolve) => setImmediate(resolve))
        }
        child.child.kill('SIGTERM')
        const exit = await child.exit(30_000)

        // then: no success reported
        expect(exit.code).not.toBe(0)
        expect(exit.stdout).toBe('')
      } finally {
        await gate.query('select pg_advisory_unlock(424242)')
        await gate.end()
      }
      // the killed import's backend, released by the gate, rolls its transaction back
      for (;;) {
        const left = await sql<{ n: string }>(
          target,
          "select count(*) as n from pg_stat_activity where application_name = 'turnlog-cli' and datname = current_database()",
        )
        if (Number(left[0]?.n) === 0) break
        await new Promise((resolve) => setImmediate(resolve))
      }
      const counts = await eventCounts(target)
      expect(counts.size).toBeGreaterThan(0)
      expect(counts.size).toBeLessThan(SESSIONS)
      expect(counts.has(last)).toBe(false)
      expect([...counts.values()].every((n) => n === EVENTS_PER_SESSION)).toBe(true)
      expect([...counts.keys()].sort()).toEqual(ids.slice(0, counts.size))

      // and when the same import runs again (the gate removed)
      await sql(target, 'drop trigger import_gate on turnlog.events')
      const again = await runTurnlog(['--database-url', target.connectionString, 'import', 'all.jsonl', '--json'], { cwd: dir })
      const audit = await runTurnlog(['--database-url', target.connectionString, 'audit', '--all', '--fail-on', 'warning', '--json'], {
        cwd: dir,
      })

      // then it writes the rest, skips what was committed, and the audit finds nothing
      expect(again.code).toBe(0)
      expect(again.json()).toMatchObject({
        sessions: SESSIONS,
        eventsWritten: (SESSIONS - counts.size) * EVENTS_PER_SESSION,
        eventsSkipped: counts.size * EVENTS_PER_SESSION,
      })
      expect(audit.code).toBe(0)
      expect(audit.json()).toMatchObject({ sessionsAudited: SESSIONS, findings: [] })
    },
    SLOW,
  )
})

describe('the same regressions in-process (runCli of the sources)', () => {
  let port: number
  useSilentServer((p) => (port = p))

  const cli = (argv: string[]): Promise<InProcessRun> => runCliInProcess(argv, dir)

  it(
    'hides every password, says a silent server timed out, escapes a hostile cause, and prints no JSON for `-- --json`',
    async () => {
      // given
      await writeFile(join(dir, 'hostile-in-process.jsonl'), '\u001b]0;PWNED\u0007\u202e{"x":1}\n')

      // when
      const [query, keyword, unencoded, silent, hostile, operand] = await Promise.all([
        cli(['--database-url', 'postgresql://postgres@127.0.0.1:1/postgres?password=hunter2-query', 'sessions', '--json']),
        cli(['--database-url', 'host=127.0.0.1 password=hunter2-keyword', 'sessions', '--json']),
        cli(['--database-url', 'postgresql://app:hunter2/unencoded@127.0.0.1:1/app', 'sessions', '--json']),
        cli(['--database-url', `postgresql://postgres@127.0.0.1:${port}/app`, 'sessions', '--json']),
        cli(['--database-url', db.connectionString, 'import', 'hostile-in-process.jsonl', '--format', 'turnlog']),
        cli(['--database-url', db.connectionString, 'import', '--', '--json']),
      ])

      // then
      for (const r of [query, keyword, unencoded]) expect(`${r.out}${r.err}`).not.toContain('hunter2')
      expect([query.code, keyword.code, unencoded.code]).toEqual([3, 2, 2])
      expect((JSON.parse(unencoded.out) as ErrorDocument).error).toMatchObject({
        code: 'USAGE',
        hint: expect.stringMatching(/Percent-encode/),
      })
      expect(silent.code).toBe(3)
      expect((JSON.parse(silent.out) as ErrorDocument).error.hint).toMatch(/did not answer in time/)
      expect(hostile.code).toBe(3)
      expect(hostile.err).toContain('\\x1b]0;PWNED\\x07')
      expect(rawControls(hostile.err)).toEqual([])
      expect(operand).toMatchObject({ code: 2, out: '', err: expect.stringContaining('error FILE_NOT_FOUND') })
    },
    SLOW,
  )
})
