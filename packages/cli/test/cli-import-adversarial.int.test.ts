/**
 * `turnlog import` against hostile files, run as the built binary against Postgres (docs/cli.md,
 * "import", "Exit codes"; audit.md, "Export and import"). `turnlog export` against hostile readers is
 * `cli-export-adversarial.int.test.ts`.
 *
 * - Tampered export files (a changed byte in a payload, two event lines swapped, a duplicated line, a
 *   missing session line, a file cut inside a line, a fork's session line naming another fork point)
 *   are refused with `IMPORT_FAILED` (exit 3) naming the line, and nothing of the session they hit is
 *   written. Regression for the fork point: the session line is covered by no link and imported as
 *   written (the target listed `@v2` for a fork made at version 4); it must match the chained
 *   `session_forked` event.
 * - A file that starts with a UTF-8 byte order mark: regression, the format detection skipped the mark
 *   (the file was "detected" as an export or a transcript) and the import then refused line 1 as "not
 *   valid JSON". Both are read now. A transcript whose first message is longer than 64 KiB (a long
 *   system prompt): regression, the detection read 64 KiB, could not parse a cut line and asked for
 *   `--format` (exit 2); it reads until the first line is complete now.
 * - An import into a database that holds the session with other attributes is `SESSION_EXISTS`, exit 3,
 *   nothing written; the intact file then imports, and again writes nothing.
 * - `import /dev/stdin` without `--format`: the detection read the pipe's head and failed with a raw
 *   `FILE_ERROR` ("ESPIPE: invalid seek"); it is a usage error that asks for `--format` now.
 */
import { spawn } from 'node:child_process'
import { writeFile } from 'node:fs/promises'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { exportSessions } from '@turnlog/audit'
import pg from 'pg'
import { BIN, runTurnlog, type TurnlogRun } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const SLOW = 90_000

interface ErrorDocument {
  error: { code: string; message: string; details: Record<string, unknown> }
}

let db: TestDatabase
let dir: string
let root: SessionId
let fork: SessionId
/** The export of root and fork: 1 header, 2 root's session line, 3-6 its events, 7 fork's session line, 8-… its events, end. */
const lines: string[] = []
let forkLine: number

useDatabaseAndDir('turnlog-cli-import-adv-', (made) => ({ db, dir } = made))

const run = (database: TestDatabase, args: string[]): Promise<TurnlogRun> =>
  runTurnlog(['--database-url', database.connectionString, ...args], { cwd: dir })

/** The session ids of a database, read with SQL (quicker than one more process). */
async function sessionIds(database: TestDatabase): Promise<string[]> {
  const client = new pg.Client({ connectionString: database.connectionString })
  await client.connect()
  try {
    const { rows } = await client.query<{ id: string }>('select session_id::text as id from turnlog.sessions order by session_id')
    return rows.map((r) => r.id)
  } finally {
    await client.end()
  }
}

/** Every session row and event count of a database, to show that a refused import changed nothing. */
async function sessionRows(database: TestDatabase): Promise<unknown[]> {
  const client = new pg.Client({ connectionString: database.connectionString })
  await client.connect()
  try {
    const { rows } = await client.query(
      'select s.*, (select count(*) from turnlog.events e where e.session_id = s.session_id) as events from turnlog.sessions s order by session_id',
    )
    return rows
  } finally {
    await client.end()
  }
}

beforeAll(async () => {
  const store = await openStore({ connectionString: db.connectionString })
  try {
    root = await store.createSession({ metadata: { title: 'root' } })
    const q = createMessage({ role: 'user', content: 'hello' })
    const a = createMessage({ role: 'assistant', content: 'hi there' })
    await store.append(root, [q, a, createMessage({ role: 'user', content: 'q2' }), createMessage({ role: 'assistant', content: 'a2' })])
    fork = await store.fork(root, { at: a.id })
    await store.append(fork, [createMessage({ role: 'user', content: 'branch' })])
    // the file under attack: root then fork (an export's order is the session id's), made in-process
    for await (const line of exportSessions(store, { sessionIds: [root, fork] })) lines.push(line)
  } finally {
    await store.close()
  }
  forkLine = lines.findIndex((l) => l.startsWith('{"kind":"session"') && l.includes(fork))
  await writeFile(join(dir, 'intact.jsonl'), `${lines.join('\n')}\n`)
}, 120_000)

describe('turnlog import of a tampered export file', () => {
  let target: TestDatabase
  beforeAll(async () => {
    target = await createTestDatabase()
  })
  afterAll(async () => {
    await target.drop()
  })

  /** `lines` with line `n` (1-based) rewritten by `edit`. */
  const edited = (n: number, edit: (line: string) => string): string[] => lines.map((l, i) => (i === n - 1 ? edit(l) : l))

  it(
    'refuses each with IMPORT_FAILED (exit 3) naming the line, writing nothing of the session it hits',
    async () => {
      // given
      expect(forkLine).toBe(6)
      const variants: [string, string[], number][] = [
        ['a changed byte in a payload', edited(3, (l) => l.replace('"content":"hello"', '"content":"hellO"')), 3],
        ['two event lines swapped', [...lines.slice(0, 2), lines[3] as string, lines[2] as string, ...lines.slice(4)], 3],
        ['an event line duplicated', [...lines.slice(0, 4), lines[3] as string, ...lines.slice(4)], 5],
        ["the first session's line missing", [lines[0] as string, ...lines.slice(2)], 2],
        ['a file cut inside a line', [...lines.slice(0, 3), (lines[3] as string).slice(0, 40)], 4],
        ['the header duplicated', [lines[0] as string, ...lines], 2],
      ]
      for (const [name, file] of variants) await writeFile(join(dir, `${name.replace(/\W+/g, '-')}.jsonl`), `${file.join('\n')}\n`)

      // when
      const runs = await Promise.all(
        variants.map(([name]) => run(target, ['import', `${name.replace(/\W+/g, '-')}.jsonl`, '--format', 'turnlog', '--json'])),
      )

      // then
      for (const [k, [name, , line]] of variants.entries()) {
        const r = runs[k] as TurnlogRun
        expect({ name, code: r.code }).toEqual({ name, code: 3 })
        expect({ name, error: r.json<ErrorDocument>().error }).toMatchObject({ name, error: { code: 'IMPORT_FAILED', details: { line } } })
      }
      expect(await sessionIds(target)).toEqual([])
    },
    SLOW,
  )

  it(
    'refuses a fork whose session line names another fork point than its chained session_forked event; the root before it is committed',
    async () => {
      // given
      const moved = edited(forkLine + 1, (l) =>
        l.replace(/"parent":\{"sessionId":"([^"]+)","version":4/, '"parent":{"sessionId":"$1","version":2'),
      )
      expect(moved).not.toEqual(lines)
      await writeFile(join(dir, 'moved-fork.jsonl'), `${moved.join('\n')}\n`)

      // when
      const refused = await run(target, ['import', 'moved-fork.jsonl', '--json'])

      // then
      expect(refused.code).toBe(3)
      expect(refused.json<ErrorDocument>().error).toMatchObject({
        code: 'IMPORT_FAILED',
        details: { line: forkLine + 2, sessionId: fork, seq: 1, reason: 'lineage_mismatch' },
      })
      expect(await sessionIds(target)).toEqual([root])
    },
    SLOW,
  )

  it(
    'detects and reads a file that starts with a UTF-8 byte order mark, and a transcript whose first line is longer than 64 KiB',
    async () => {
      // given
      await writeFile(join(dir, 'bom.jsonl'), `\uFEFF${lines.join('\n')}\n`)
      await writeFile(join(dir, 'bom-chat.jsonl'), '\uFEFF{"role":"user","content":"from notepad"}\n{"role":"assistant","content":"ok"}\n')

      // and a transcript whose first message (a long system prompt) is longer than the detection's first read
      await writeFile(
        join(dir, 'long-first.jsonl'),
        `${JSON.stringify({ role: 'system', content: 'p'.repeat(200_000) })}\n{"role":"user","content":"hi"}\n`,
      )

      // when
      const [exportRun, chatRun, longRun] = await Promise.all([
        run(target, ['import', 'bom.jsonl', '--json']),
        run(target, ['import', 'bom-chat.jsonl', '--json']),
        run(target, ['import', 'long-first.jsonl', '--json']),
      ])
      const again = await run(target, ['import', 'bom.jsonl', '--json'])

      // then
      expect(exportRun.code).toBe(0)
      expect(exportRun.json()).toMatchObject({ format: 'turnlog', detected: true, sessions: 2, sessionIds: [root, fork] })
      expect(chatRun.code).toBe(0)
      expect(chatRun.json()).toMatchObject({ format: 'openai-jsonl', detected: true, appended: 2 })
      expect(again.json()).toMatchObject({ eventsWritten: 0 })
      expect(longRun.code).toBe(0)
      expect(longRun.json()).toMatchObject({ format: 'openai-jsonl', detected: true, appended: 2 })
    },
    SLOW,
  )

  it(
    'into a database holding the session with other attributes: SESSION_EXISTS, exit 3, nothing written',
    async () => {
      // given: the same root, with other metadata in its session line; the target holds root already
      const other = edited(2, (l) => l.replace('"title":"root"', '"title":"forged"'))
      expect(other).not.toEqual(lines)
      await writeFile(join(dir, 'other-attributes.jsonl'), `${other.join('\n')}\n`)
      const before = await sessionRows(target)

      // when
      const refused = await run(target, ['import', 'other-attributes.jsonl', '--json'])

      // then
      expect(refused.code).toBe(3)
      expect(refused.json<ErrorDocument>().error).toMatchObject({ code: 'SESSION_EXISTS' })
      expect(await sessionRows(target)).toEqual(before)
    },
    SLOW,
  )
})

describe('turnlog import from a pipe', () => {
  /**
   * Runs `cat <file> | turnlog import /dev/stdin …` in a shell: a real pipe (a child's stdin piped from
   * Node is a socket, which /dev/stdin cannot open).
   */
  const fromPipe = async (database: TestDatabase, input: string, args: string[]): Promise<{ code: number | null; stdout: string }> => {
    const file = join(dir, 'piped.jsonl')
    await writeFile(file, input)
    return new Promise((resolve, reject) => {
      const child = spawn(
        'sh',
        [
          '-c',
          'f=$0 node=$1 bin=$2 url=$3; shift 3; cat "$f" | "$node" "$bin" --database-url "$url" import /dev/stdin "$@"',
          file,
          process.execPath,
          BIN,
          database.connectionString,
          ...args,
        ],
        { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
      )
      let stdout = ''
      child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk))
      child.on('error', reject)
      child.on('close', (code) => resolve({ code, stdout }))
    })
  }

  it(
    'needs --format (its head cannot be read twice): a usage error, not a read error; with it the messages import',
    async () => {
      // given
      const chat = Array.from({ length: 3 }, (_, i) => JSON.stringify({ role: i % 2 === 0 ? 'user' : 'assistant', content: `m${i}` }))
      const target = await createTestDatabase()
      try {
        // when
        const detected = await fromPipe(target, `${chat.join('\n')}\n`, ['--json'])
        const given = await fromPipe(target, `${chat.join('\n')}\n`, ['--format', 'openai-jsonl', '--json'])

        // then
        expect(detected.code).toBe(2)
        expect((JSON.parse(detected.stdout) as ErrorDocument).error).toMatchObject({ code: 'USAGE' })
        expect(given.code).toBe(0)
        expect(JSON.parse(given.stdout)).toMatchObject({ format: 'openai-jsonl', appended: 3 })
      } finally {
        await target.drop()
      }
    },
    SLOW,
  )
})
