/**
 * docs/cli.md under a second adversarial audit (an operator at 3 a.m.), one describe per section of the
 * doc. What cli-promises, cli-adversarial, cli-export-adversarial, cli-import-adversarial and the other
 * CLI tests pin is not repeated. Real Postgres (a database of this file's own), real PGlite data
 * directories, real files; the built binary where a real process matters (signals, pipes, /dev/full,
 * the process environment), `runCli` of the sources elsewhere (what a mutant of `packages/cli/src`
 * reaches).
 *
 * Broken promises found, now fixed (each failed before its fix):
 * - "the next tail with the same name resumes after the last event printed": a durable `tail --name`
 *   whose stdout failed (a full disk behind `>`, a reader gone) went on "printing" into nothing and moved
 *   its checkpoint past events that were never written: the next run skipped them for good. Now an
 *   event whose write fails is not printed and the checkpoint stays before it.
 * - "SIGINT (Ctrl-C) or SIGTERM: … exit 0": a signal while tail was still opening the database killed the
 *   process (exit 143/130, an embedded data directory left mid-open); in-process, the tail subscribed
 *   anyway and created the new durable name's checkpoint. Now tail listens from the start and ends
 *   before it subscribes.
 * - `import` of a file that is not UTF-8 (a Latin-1 transcript): imported, with every such byte stored
 *   for good as U+FFFD in an append-only log. Now `IMPORT_FAILED` naming the line, nothing written.
 * - "Every failure prints its stable code": a usage error commander refuses (a bad option value, an
 *   unknown option) printed commander's `error: …` on stderr, without the code, and quoted the argument
 *   raw (an ESC in it reached the terminal). It is `turnlog: error USAGE: …` with the argument escaped,
 *   and the same hint as the `--json` document.
 * - "The CLI reads no other variables": node-postgres fills what a URL leaves out from PGHOST, PGPORT,
 *   PGDATABASE, PGPASSWORD, …; the doc says so now (pinned below).
 */
import { execFile, spawn } from 'node:child_process'
import { closeSync, existsSync, openSync } from 'node:fs'
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises'
import { createServer, type Server, type Socket } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import { listSubscriptions, openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import type { CliIo, InterruptReason } from '../src/cli-io.js'
import * as cliIndex from '../src/index.js'
import { runCli } from '../src/run-cli.js'
import { BIN, runTurnlog } from './support/run-turnlog.js'
import { spawnTurnlog } from './support/spawn-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const SLOW = 120_000

interface ErrorDocument {
  error: { code: string; message: string; hint: string | null; cause: string | null; details: Record<string, unknown> }
}
interface TailedEvent {
  sessionId: string
  seq: number
  type: string
  globalPosition: number
}

let db: TestDatabase
let dir: string
let url: string
/** A session with message_appended, messages_retracted and message_revised events. */
let typed: SessionId
/** A session of ~1.5 MB, so that a pipe's buffer holds only the start of an export. */
let big: SessionId
/** The first event of the log (a durable tail from the start begins there). */
let firstPosition: number

useDatabaseAndDir('turnlog-cli-doc-audit-', (made) => ({ db, dir } = made))

beforeAll(async () => {
  url = db.connectionString
  const store = await openStore({ connectionString: url })
  try {
    typed = await store.createSession({ metadata: { title: '</title><script>alert(1)</script>' } })
    const [a, b, c] = [
      createMessage({ role: 'user', content: '<img src=x onerror=alert(1)> and </script><script>alert(2)</script>' }),
      createMessage({ role: 'assistant', content: 'ok' }),
      createMessage({ role: 'user', content: 'dropped' }),
    ]
    await store.append(typed, [a, b, c])
    await store.rewind(typed, { after: b.id })
    await store.revise(typed, b.id, { role: 'assistant', content: 'ok, revised' })
    big = await store.createSession({ metadata: { title: 'big' } })
    await store.append(
      big,
      Array.from({ length: 300 }, (_, i) =>
        createMessage({ role: i % 2 === 0 ? 'user' : 'assistant', content: `${i} ${'x'.repeat(5000)}` }),
      ),
    )
  } finally {
    await store.close()
  }
  firstPosition = 1
}, SLOW)

/** What one in-process run printed, and its exit code. */
interface Run {
  readonly code: number
  readonly out: string
  readonly err: string
}

/**
 * Runs the command line through `runCli` of the sources in `dir`, with the environment `env` (nothing
 * else: not the test process's), and, when given, an `io.out`, a look at stderr and an `io.onInterrupt`
 * of the test's own.
 */
async function cli(
  argv: readonly string[],
  options: {
    env?: Record<string, string>
    cwd?: string
    out?: (text: string) => void
    /** Sees each text written to stderr (which is collected as well). */
    onErr?: (text: string) => void
    onInterrupt?: CliIo['onInterrupt']
  } = {},
): Promise<Run> {
  let out = ''
  let err = ''
  const io: CliIo = {
    out: options.out ?? ((t) => (out += t)),
    err: (t) => {
      err += t
      options.onErr?.(t)
    },
    progressStream: undefined,
    env: options.env ?? {},
    cwd: options.cwd ?? dir,
    ...(options.onInterrupt === undefined ? {} : { onInterrupt: options.onInterrupt }),
  }
  const code = await runCli(argv, io)
  return { code, out, err }
}

/** The one JSON error document of a failed `--json` run, checked for its exact shape. */
function errorDocument(run: { out: string }): ErrorDocument['error'] {
  const lines = run.out.split('\n').filter((l) => l !== '')
  expect(lines).toHaveLength(1)
  const doc = JSON.parse(lines[0] as string) as ErrorDocument
  expect(Object.keys(doc)).toEqual(['error'])
  expect(Object.keys(doc.error).sort()).toEqual(['cause', 'code', 'details', 'hint', 'message'])
  return doc.error
}

/** Runs `script` in bash (`$0` is node, `$1` the binary, `$2` the URL) and returns its stderr and exit. */
function bash(script: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      'bash',
      ['-c', script, process.execPath, BIN, url],
      { cwd: dir, timeout: 60_000, encoding: 'utf8', env: { ...process.env, TURNLOG_DATABASE_URL: '', DATABASE_URL: '' } },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : (error as { code?: unknown }).code
        if (typeof code !== 'number') reject(new Error(`bash ${script} did not exit normally: ${String(error)}\n${stderr}`))
        else resolve({ code, stdout, stderr })
      },
    )
  })
}

/**
 * A fake Postgres server that asks for a cleartext password and refuses it with SQLSTATE 28P01, as a
 * server with password authentication does (the test server trusts every password). `passwords`
 * collects what clients sent, so a test can tell the password did reach the server.
 */
function usePasswordRefusingServer(ready: (port: number, passwords: string[]) => void): void {
  let server: Server
  const sockets = new Set<Socket>()
  const passwords: string[] = []
  beforeAll(async () => {
    server = createServer((socket) => {
      sockets.add(socket)
      let buffer = Buffer.alloc(0)
      let startup = true
      socket.on('data', (data: Buffer) => {
        buffer = Buffer.concat([buffer, data])
        if (startup) {
          if (buffer.length < 4 || buffer.length < buffer.readInt32BE(0)) return
          buffer = buffer.subarray(buffer.readInt32BE(0))
          startup = false
          const ask = Buffer.alloc(9) // AuthenticationCleartextPassword
          ask.write('R', 0)
          ask.writeInt32BE(8, 1)
          ask.writeInt32BE(3, 5)
          socket.write(ask)
          return
        }
        if (buffer.length < 5 || buffer.length < 1 + buffer.readInt32BE(1)) return
        passwords.push(buffer.subarray(5, buffer.readInt32BE(1)).toString('utf8'))
        const fields = Buffer.from(['SFATAL', 'VFATAL', 'C28P01', 'Mpassword authentication failed for user "app"', ''].join('\0') + '\0')
        const header = Buffer.alloc(5)
        header.write('E', 0)
        header.writeInt32BE(4 + fields.length, 1)
        socket.end(Buffer.concat([header, fields]))
      })
      socket.on('error', () => {})
    })
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
    ready((server.address() as { port: number }).port, passwords)
  })
  afterAll(async () => {
    for (const socket of sockets) socket.destroy()
    await new Promise<void>((resolve) => server.close(() => resolve()))
  })
}

describe('Choosing the database', () => {
  let port = 0
  let passwords: string[] = []
  usePasswordRefusingServer((p, seen) => {
    port = p
    passwords = seen
  })

  it(
    '--database-url beats both URL variables; an empty TURNLOG_DATABASE_URL counts as unset; each run names its source',
    async () => {
      // given: variables that point nowhere
      const nowhere = 'postgresql://postgres@127.0.0.1:1/nowhere'

      // when
      const flag = await cli(['--database-url', url, 'sessions', '--limit', '1'], {
        env: { TURNLOG_DATABASE_URL: nowhere, DATABASE_URL: nowhere },
      })
      const emptyFirst = await cli(['sessions', '--limit', '1'], { env: { TURNLOG_DATABASE_URL: '', DATABASE_URL: url } })

      // then
      expect(flag.code).toBe(0)
      expect(flag.err).toMatch(/^turnlog: database: Postgres \S+ \(--database-url\)\n$/)
      expect(emptyFirst.code).toBe(0)
      expect(emptyFirst.err).toMatch(/\(DATABASE_URL\)\n$/)
    },
    SLOW,
  )

  it(
    'a password the server refuses (SQLSTATE 28P01): exit 3, the credentials hint, and the password nowhere in the output',
    async () => {
      // given: the password in the URL of the option, of each variable, and in PGPASSWORD
      const withPassword = `postgresql://app:hunter2-refused@127.0.0.1:${port}/app`
      const withoutPassword = `postgresql://app@127.0.0.1:${port}/app`

      // when
      // (in-process runs one after the other: Jest's module loader fails concurrent first imports of a module)
      const inProcess = [
        await cli(['--database-url', withPassword, 'sessions', '--json']),
        await cli(['sessions'], { env: { TURNLOG_DATABASE_URL: withPassword } }),
      ]
      const runs = [
        ...inProcess,
        ...(await Promise.all([
          runTurnlog(['--database-url', withPassword, 'sessions'], { cwd: dir }),
          runTurnlog(['sessions', '--json'], { cwd: dir, env: { DATABASE_URL: withPassword } }),
          runTurnlog(['--database-url', withoutPassword, 'export', '--all', '-o', 'x.jsonl'], {
            cwd: dir,
            env: { PGPASSWORD: 'hunter2-refused' },
          }),
        ])),
      ]

      // then: the server got the password every time, and it was never printed
      expect(passwords.filter((p) => p === 'hunter2-refused').length).toBeGreaterThanOrEqual(5)
      for (const run of runs) {
        const { code, out, err } = 'stdout' in run ? { code: run.code, out: run.stdout, err: run.stderr } : run
        expect({ code, printed: `${out}${err}`.includes('hunter2') }).toEqual({ code: 3, printed: false })
        expect(err).toMatch(/hint: Postgres at postgresql:\/\/app(:\*\*\*)?@127\.0\.0\.1:\d+\/app refused the credentials/)
      }
      expect(errorDocument(runs[0] as Run).hint).toMatch(/refused the credentials/)
      expect(existsSync(join(dir, 'x.jsonl'))).toBe(false)
    },
    SLOW,
  )
})

describe('--json and the exit codes: the error document of each kind of failure', () => {
  it(
    'one JSON document { error: { code, message, hint, cause, details } } on stdout, `turnlog: error <code>:` on stderr (a usage error too), the documented exit code',
    async () => {
      // given
      await mkdir(join(dir, 'empty-data-dir'), { recursive: true })
      await writeFile(join(dir, 'not-a-data-dir'), 'a file')
      await writeFile(join(dir, 'empty.jsonl'), '')
      const cases: [string[], string, number][] = [
        [['sessions', '--limit', '0'], 'USAGE', 2],
        // an argument a script took from a hostile source: quoted escaped, never as terminal controls
        [['sessions', '--\u001b]0;pwned\u0007'], 'USAGE', 2],
        [['--data-dir', 'x', 'sessions'], 'USAGE', 2],
        [['import', 'no-such-file.jsonl'], 'FILE_NOT_FOUND', 2],
        [['replay', 'not-an-id'], 'INVALID_INPUT', 2],
        [['replay', '0190c5e2-7b1c-7a33-9f00-1234567890ab'], 'SESSION_NOT_FOUND', 2],
        [['tail', '--types', 'message_appended,no_such_type'], 'USAGE', 2],
        [['import', 'empty.jsonl', '--format', 'turnlog'], 'IMPORT_FAILED', 3],
        [['inspect', typed, '--html', join(dir, 'no-such-dir', 'x.html')], 'FILE_ERROR', 3],
      ]

      // when: one after the other (see above)
      const runs: Run[] = []
      for (const argv of [
        ...cases.map(([line]) => ['--database-url', url, ...line, '--json']),
        ['--data-dir', 'empty-data-dir', 'audit', '--all', '--json'],
        ['--data-dir', 'not-a-data-dir', 'sessions', '--json'],
        ['--database-url', 'postgresql://postgres@127.0.0.1:1/x', 'sessions', '--json'],
      ])
        runs.push(await cli(argv))

      // then
      const expected = [
        ...cases.map(([, code, exit]) => [code, exit]),
        ['DATABASE_NOT_FOUND', 2],
        ['DATA_DIR_INVALID', 3],
        ['DB_TRANSIENT', 3],
      ]
      for (const [k, run] of runs.entries()) {
        const [code, exit] = expected[k] as [string, number]
        expect({ k, code: errorDocument(run).code, exit: run.code }).toEqual({ k, code, exit })
        expect(run.err).toContain(`turnlog: error ${code}:`)
      }
      expect(runs[1]?.err).toContain("unknown option '--\\x1b]0;pwned\\x07'")
      // eslint-disable-next-line no-control-regex -- raw control characters on stderr are what is looked for
      expect(runs.map((r) => r.err).join('')).not.toMatch(/[\u0000-\u0009\u000b-\u001f]/)
    },
    SLOW,
  )
})

describe('turnlog export', () => {
  it(
    'an existing file is replaced only by a complete export: a failed one leaves it as it was, and no partial file',
    async () => {
      // given
      const out = join(dir, 'existing.jsonl')
      await writeFile(out, 'yesterday\n')

      // when
      const failed = await cli(['--database-url', url, 'export', '0190c5e2-7b1c-7a33-9f00-1234567890ab', '-o', out])
      const kept = await readFile(out, 'utf8')
      const done = await cli(['--database-url', url, 'export', typed, '-o', out, '--json'])

      // then
      expect(failed.code).toBe(2)
      expect(kept).toBe('yesterday\n')
      expect(done.code).toBe(0)
      expect((await readFile(out, 'utf8')).split('\n')[0]).toMatch(/^\{"format":"turnlog-export"/)
      expect((await readdir(dir)).filter((name) => name.includes('.partial-'))).toEqual([])
    },
    SLOW,
  )

  it(
    '--all on an empty database: a header and an end line of 0 sessions, exit 0; it imports as nothing',
    async () => {
      // given
      const empty = await createTestDatabase()
      try {
        await cli(['--database-url', empty.connectionString, 'migrate'])

        // when
        const exported = await cli(['--database-url', empty.connectionString, 'export', '--all', '-o', 'empty-db.jsonl', '--json'])
        const imported = await cli(['--database-url', empty.connectionString, 'import', 'empty-db.jsonl', '--json'])

        // then
        expect(exported.code).toBe(0)
        expect(JSON.parse(exported.out)).toMatchObject({ sessions: 0, events: 0, conflictsNotExported: 0 })
        const lines = (await readFile(join(dir, 'empty-db.jsonl'), 'utf8')).trim().split('\n')
        expect(lines).toHaveLength(2)
        expect(JSON.parse(lines[1] as string)).toEqual({ kind: 'end', sessions: 0, events: 0 })
        expect(imported.code).toBe(0)
        expect(JSON.parse(imported.out)).toMatchObject({ sessions: 0, eventsWritten: 0 })
      } finally {
        await empty.drop()
      }
    },
    SLOW,
  )
})

describe('pipes closed early (a real shell pipeline)', () => {
  it(
    '`export --all -o - | head -c 100` fails with FILE_ERROR, exit 3; `tail | head -1` and `sessions | head -1` exit 0; no stack trace',
    async () => {
      // when
      const [exported, tailed, listed] = await Promise.all([
        bash('node "$1" --database-url "$2" export --all -o - | head -c 100 > /dev/null; echo "exit=${PIPESTATUS[0]}" >&2'),
        bash('node "$1" --database-url "$2" tail --from start | head -1; echo "exit=${PIPESTATUS[0]}" >&2'),
        bash('node "$1" --database-url "$2" sessions --limit 1 | head -1; echo "exit=${PIPESTATUS[0]}" >&2'),
      ])

      // then
      expect(exported.stderr).toMatch(/exit=3\n$/)
      expect(exported.stderr).toContain('turnlog: error FILE_ERROR')
      expect(tailed.stderr).toMatch(/stopped after \d+ event\(s\) \(stdout was closed\)[^\n]*\nexit=0\n$/)
      expect(tailed.stdout.split('\n')).toHaveLength(2)
      expect(listed.stderr).toMatch(/exit=0\n$/)
      for (const run of [exported, tailed, listed]) expect(run.stderr).not.toMatch(/\n\s+at |Error:/)
    },
    SLOW,
  )
})

describe('turnlog audit --transcript', () => {
  it('a transcript that is not UTF-8 is a usage error naming the file, not text with U+FFFD (false findings)', async () => {
    // given a Latin-1 transcript of the typed session's first message
    await writeFile(join(dir, 'seen-latin1.jsonl'), Buffer.from('{"role":"user","content":"caf\xe9"}\n', 'latin1'))
    // when
    const run = await cli(['--database-url', url, '--json', 'audit', typed, '--transcript', 'seen-latin1.jsonl'])
    // then: exit 2, the file named, nothing audited
    expect(run.code).toBe(2)
    const doc = JSON.parse(run.out) as ErrorDocument
    expect(doc.error.code).toBe('USAGE')
    expect(doc.error.message).toBe('seen-latin1.jsonl is not UTF-8 text')
    expect(doc.error.hint).toContain('iconv')
  })
})

describe('turnlog import', () => {
  it(
    'a line that is not UTF-8 fails with IMPORT_FAILED naming it, nothing written; UTF-8 split across read chunks imports exactly',
    async () => {
      // given: Latin-1 on line 2 of a transcript and of an export; a transcript whose multi-byte characters
      // straddle the 64 KiB read chunks
      const id = '0190c5e2-7b1c-7a33-9f00-00000000a001'
      await writeFile(
        join(dir, 'latin1.jsonl'),
        Buffer.concat([
          Buffer.from('{"role":"user","content":"plain"}\n'),
          Buffer.from('{"role":"assistant","content":"caf\xe9"}\n', 'latin1'),
        ]),
      )
      await cli(['--database-url', url, 'export', typed, '-o', 'typed.jsonl'])
      const exportLines = (await readFile(join(dir, 'typed.jsonl'), 'utf8')).split('\n')
      const damaged = Buffer.from(exportLines.join('\n').replace('"title":"', '"title":"\u00e9'), 'utf8')
      const at = damaged.indexOf(Buffer.from('\u00e9', 'utf8'))
      await writeFile(
        join(dir, 'latin1-export.jsonl'),
        Buffer.concat([damaged.subarray(0, at), Buffer.from([0xe9]), damaged.subarray(at + 2)]),
      )
      const long = `${'é'.repeat(40_000)}😀${'ü'.repeat(40_000)} \ufffd kept`
      await writeFile(
        join(dir, 'utf8.jsonl'),
        `\ufeff{"role":"user","content":${JSON.stringify(long)}}\r\n{"role":"assistant","content":"ok"}\r\n`,
      )
      const fresh = await createTestDatabase()
      try {
        // when
        const transcript = await cli(['--database-url', fresh.connectionString, 'import', 'latin1.jsonl', '--session', id, '--json'])
        const exported = await cli(['--database-url', fresh.connectionString, 'import', 'latin1-export.jsonl', '--json'])
        const good = await cli(['--database-url', fresh.connectionString, 'import', 'utf8.jsonl', '--json'])
        const listed = await cli(['--database-url', fresh.connectionString, 'sessions', '--json'])

        // then
        for (const run of [transcript, exported]) {
          expect(run.code).toBe(3)
          expect(errorDocument(run)).toMatchObject({ code: 'IMPORT_FAILED', message: expect.stringMatching(/^line 2: .*not UTF-8/) })
        }
        expect(good.code).toBe(0)
        const goodId = (JSON.parse(good.out) as { sessionId: string }).sessionId
        expect((JSON.parse(listed.out) as { sessions: { sessionId: string }[] }).sessions.map((s) => s.sessionId)).toEqual([goodId])
        const replayed = await cli(['--database-url', fresh.connectionString, 'replay', goodId, '--json'])
        const messages = (JSON.parse(replayed.out) as { messages: { payload: { content: string } }[] }).messages
        expect(messages.map((m) => m.payload.content)).toEqual([long, 'ok'])
      } finally {
        await fresh.drop()
      }
    },
    SLOW,
  )
})

describe('turnlog tail', () => {
  /** An `io.onInterrupt` and `io.out` as processIo gives them for a stdout whose writes fail (reported a tick later). */
  function failingStdout(): { out: (text: string) => void; onInterrupt: NonNullable<CliIo['onInterrupt']>; writes: () => number } {
    const listeners = new Set<(reason: InterruptReason) => void>()
    let writes = 0
    let failed = false
    return {
      out: () => {
        writes++
        if (failed) return
        failed = true
        process.nextTick(() => {
          for (const listener of [...listeners]) listener('stdout-closed')
        })
      },
      onInterrupt: (listener) => {
        listeners.add(listener)
        if (failed) queueMicrotask(() => listener('stdout-closed'))
        return () => listeners.delete(listener)
      },
      writes: () => writes,
    }
  }

  it(
    '--types keeps only the listed event types (comma-separated, repeatable), in seq order',
    async () => {
      // when
      const run = await cli([
        '--database-url',
        url,
        'tail',
        '--from',
        'start',
        '--session',
        typed,
        '--types',
        'messages_retracted',
        '--types',
        'message_revised,session_forked',
        '--json',
        '--limit',
        '2',
      ])

      // then
      expect(run.code).toBe(0)
      const events = run.out
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as TailedEvent)
      expect(events.map((e) => [e.sessionId, e.seq, e.type])).toEqual([
        [typed, 4, 'messages_retracted'],
        [typed, 5, 'message_revised'],
      ])
    },
    SLOW,
  )

  it(
    'regression: a durable --name whose stdout fails keeps its checkpoint before the first event not written (in-process)',
    async () => {
      // given: every write fails, reported a tick later, as on a full disk
      const stdout = failingStdout()

      // when
      const failed = await cli(['--database-url', url, 'tail', '--name', 'doc-audit-full', '--from', 'start', '--limit', '5'], stdout)
      const resumed = await cli(['--database-url', url, 'tail', '--name', 'doc-audit-full', '--json', '--limit', '1'])

      // then: the next run starts at the first event of the log, which never reached stdout
      expect(failed.code).toBe(0)
      expect(stdout.writes()).toBe(1)
      expect(failed.err).toMatch(/stopped after 0 event\(s\) \(stdout was closed\)/)
      expect((JSON.parse(resumed.out) as TailedEvent).globalPosition).toBe(firstPosition)
    },
    SLOW,
  )

  it(
    'regression: a durable --name writing to a full disk (stdout /dev/full): exit 3, and the next run resumes at the first event',
    async () => {
      // given
      const full = openSync('/dev/full', 'w')
      const child = spawn(
        process.execPath,
        [BIN, '--database-url', url, 'tail', '--name', 'doc-audit-dev-full', '--from', 'start', '--json', '--limit', '50'],
        {
          cwd: dir,
          stdio: ['ignore', full, 'pipe'],
        },
      )
      closeSync(full)
      let stderr = ''
      child.stderr?.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))

      // when
      const code = await new Promise<number | null>((resolve) => child.on('close', resolve))
      const resumed = await runTurnlog(['--database-url', url, 'tail', '--name', 'doc-audit-dev-full', '--json', '--limit', '1'], {
        cwd: dir,
      })

      // then
      expect(code).toBe(3)
      expect(stderr).toContain('turnlog: error FILE_ERROR: cannot write to stdout')
      expect((JSON.parse(resumed.stdout) as TailedEvent).globalPosition).toBe(firstPosition)
    },
    SLOW,
  )

  it(
    'regression: SIGTERM while tail opens the database: exit 0, nothing subscribed, no checkpoint for a new --name (in-process)',
    async () => {
      // given: SIGTERM comes when the command names its database (before it opens it); a process with
      // no listener then would be killed by the signal
      const listeners = new Set<(reason: InterruptReason) => void>()
      let killed = false
      const onInterrupt: NonNullable<CliIo['onInterrupt']> = (listener) => {
        listeners.add(listener)
        return () => listeners.delete(listener)
      }
      const onErr = (text: string): void => {
        if (!text.startsWith('turnlog: database:')) return
        if (listeners.size === 0) killed = true
        for (const listener of [...listeners]) listener('SIGTERM')
      }

      // when (--limit: ends by itself, should the signal be lost)
      const run = await cli(['--database-url', url, 'tail', '--name', 'doc-audit-early', '--from', 'start', '--limit', '1'], {
        onInterrupt,
        onErr,
      })

      // then
      expect({ killed, code: run.code, out: run.out }).toEqual({ killed: false, code: 0, out: '' })
      expect(run.err).toMatch(/stopped before following \(SIGTERM\)/)
      const store: PostgresStore = await openStore({ connectionString: url, migrate: false })
      try {
        expect((await listSubscriptions(store)).map((s) => s.name)).not.toContain('doc-audit-early')
      } finally {
        await store.close()
      }
    },
    SLOW,
  )

  it(
    'regression: SIGTERM while tail opens an embedded database (the built binary): exit 0, not killed by the signal',
    async () => {
      // given: an embedded database with one session
      await writeFile(join(dir, 'one.jsonl'), '{"role":"user","content":"hi"}\n')
      expect((await runTurnlog(['--data-dir', 'embedded', 'import', 'one.jsonl'], { cwd: dir })).code).toBe(0)
      const child = spawnTurnlog(['--data-dir', 'embedded', 'tail', '--from', 'start'], { cwd: dir })
      // the database line comes before the store opens (PGlite takes a second or more)
      for (let i = 0; i < 500 && !child.stderr().includes('turnlog: database:'); i++) await new Promise((r) => setTimeout(r, 10))

      // when
      child.child.kill('SIGTERM')
      const exit = await child.exit(60_000)

      // then
      expect({ code: exit.code, signal: exit.signal }).toEqual({ code: 0, signal: null })
      expect(exit.stderr).toMatch(/stopped (before following \(SIGTERM\)|after \d+ event\(s\) \(SIGTERM\))/)
    },
    SLOW,
  )
})

describe('turnlog inspect --html', () => {
  it(
    'hostile content stays inert: escaped in <title>, no markup in the embedded JSON, and a CSP that forbids any fetch',
    async () => {
      // when
      const run = await cli(['--database-url', url, 'inspect', typed, '--html', 'typed.html'])
      const html = await readFile(join(dir, 'typed.html'), 'utf8')

      // then
      expect(run.code).toBe(0)
      expect(html.match(/<script\b/gi)).toHaveLength(2)
      expect(html.match(/<\/script>/gi)).toHaveLength(2)
      expect(html).not.toMatch(/<img|alert\(1\)<\/script>/i)
      const data = /<script type="application\/json" id="turnlog-data">([^]*?)<\/script>/.exec(html)?.[1] ?? ''
      expect(data).toContain('onerror=alert(1)') // the payload is there, as inert JSON text
      expect(data).not.toMatch(/[<>&]/)
      expect(html).toContain('<title>')
      expect(html.slice(html.indexOf('<title>'), html.indexOf('</title>'))).not.toMatch(/<script/i)
      const csp = /<meta http-equiv="Content-Security-Policy" content="([^"]*)">/.exec(html)?.[1] ?? ''
      expect(csp).toMatch(/(^|; )default-src 'none'(;|$)/)
      expect(csp).not.toMatch(/connect-src|https?:|\*/)
      expect(html).not.toMatch(/\b(src|href)="https?:/)
    },
    SLOW,
  )
})

describe('Environment variables', () => {
  it(
    "node-postgres's libpq variables fill what the URL leaves out (PGDATABASE here), as the doc says; the database line shows the URL as given",
    async () => {
      // given: a URL without a database name
      const server = new URL(url)
      const database = server.pathname.slice(1)
      server.pathname = '/'

      // when
      const run = await runTurnlog(['--database-url', server.toString(), 'sessions', '--json'], { cwd: dir, env: { PGDATABASE: database } })

      // then
      expect(run.code).toBe(0)
      expect(run.json<{ sessions: { sessionId: string }[] }>().sessions.map((s) => s.sessionId)).toContain(typed)
      const doc = await readFile(new URL('../../../docs/cli.md', import.meta.url), 'utf8')
      expect(doc).toMatch(/fills in what a Postgres URL leaves out from the libpq variables/)
    },
    SLOW,
  )
})

describe('Running it from code', () => {
  it(
    'runCli returns the code without touching process.exitCode, reads io.env and io.cwd (not the process), and the inspect page is exported',
    async () => {
      // given: a DATABASE_URL in the process environment that runCli must not read
      const saved = { exitCode: process.exitCode, databaseUrl: process.env['DATABASE_URL'] }
      process.exitCode = undefined
      process.env['DATABASE_URL'] = url
      try {
        // when
        const run = await cli(['sessions', '--json'], { cwd: join(dir, 'empty-cwd') })

        // then: no variable in io.env, so the embedded default of io.cwd, which holds no database
        expect(run.code).toBe(2)
        expect(errorDocument(run).code).toBe('DATABASE_NOT_FOUND')
        expect(errorDocument(run).message).toContain(join(dir, 'empty-cwd', '.turnlog'))
        expect(process.exitCode).toBeUndefined()
        expect(existsSync(join(dir, 'empty-cwd'))).toBe(false)
      } finally {
        process.exitCode = saved.exitCode
        if (saved.databaseUrl === undefined) delete process.env['DATABASE_URL']
        else process.env['DATABASE_URL'] = saved.databaseUrl
      }
      expect(typeof cliIndex.runCli).toBe('function')
      expect(typeof cliIndex.buildInspectModel).toBe('function')
      expect(typeof cliIndex.renderInspectHtml).toBe('function')
    },
    SLOW,
  )
})
