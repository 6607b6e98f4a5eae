/**
 * What a new user tripped on in the CLI (issue 13 item 18), and a damaged embedded directory through
 * the CLI (item 12): shortened ids as the CLI prints them (`…9c67eeb6`) are accepted back; every
 * command says which database it used, and a read-only command creates no embedded database; inspect
 * lists each conflict once; export says which conflict evidence it leaves behind.
 */
import { cpSync, existsSync, mkdirSync, rmSync, truncateSync, writeFileSync } from 'node:fs'
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, isTurnlogError, newSessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, makeMigratedDataDir, type TestDatabase } from '@turnlog/testing'
import { buildInspectModel } from '../src/inspect/build-inspect-model.js'
import { inspectPageScript, renderInspectHtml } from '../src/inspect/render-inspect-html.js'
import { resolveSessionId } from '../src/resolve-session-id.js'
import { runTurnlog } from './support/run-turnlog.js'

const SLOW = 240_000

let db: TestDatabase
let dir: string
let store: PostgresStore
let plain: string
let conflicted: string
const twins = ['abcdef01-0000-4000-8000-000000000001', 'abcdef01-0000-4000-8000-000000000002']
const pgRun = (args: string[]) => runTurnlog(['--database-url', db.connectionString, ...args], { cwd: dir })

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
  dir = await mkdtemp(join(tmpdir(), 'turnlog-cli-ids-'))
  store = await openStore({ connectionString: db.connectionString })
  plain = await store.createSession()
  await store.append(plain, [createMessage({ role: 'user', content: 'hello' })])
  for (const id of twins) await store.createSession({ id })
  // a session with three refused writes of other content under one id
  conflicted = await store.createSession()
  const m = createMessage({ role: 'user', content: 'original' })
  await store.append(conflicted, [m])
  for (const content of ['changed 1', 'changed 2', 'changed 3']) {
    await store.append(conflicted, [{ ...createMessage({ role: 'user', content }), id: m.id }]).catch((e: unknown) => {
      if (!isTurnlogError(e, 'MESSAGE_CONFLICT')) throw e
    })
  }
}, SLOW)

afterAll(async () => {
  await store?.close()
  await db?.drop()
  await rm(dir, { recursive: true, force: true })
})

/** The few DOM features the inspect page's script uses. */
interface PageElement {
  appendChild(child: PageElement | object): unknown
  setAttribute(name: string, value: string): void
  addEventListener(type: string, listener: () => void): void
  scrollIntoView(options?: { block?: string; behavior?: string }): void
  textContent: string | null
  className: string
  title: string
  readonly classList: { add(...names: string[]): void; remove(...names: string[]): void; toggle(name: string, force?: boolean): boolean }
  readonly style: { setProperty(name: string, value: string): void }
}

/** The document, as far as the page's script uses it. */
interface PageDocument {
  getElementById(id: string): PageElement | null
  createElement(tag: string): PageElement
  createTextNode(text: string): object
  readonly body: PageElement
}

/** A minimal DOM for the inspect page's script: elements with attributes, classes and children. */
class FakeElement implements PageElement {
  readonly children: (FakeElement | { text: string })[] = []
  readonly attributes = new Map<string, string>()
  textContent: string | null = null
  className = ''
  title = ''
  readonly classList = { add: () => {}, remove: () => {}, toggle: () => false }
  readonly style = { setProperty: () => {} }
  appendChild(child: PageElement | object): unknown {
    this.children.push(child as FakeElement)
    return child
  }
  setAttribute(name: string, value: string): void {
    this.attributes.set(name, value)
  }
  addEventListener(): void {}
  scrollIntoView(): void {}
  all(): FakeElement[] {
    return [this, ...this.children.flatMap((c) => (c instanceof FakeElement ? c.all() : []))]
  }
  text(): string {
    return this.children.map((c) => (c instanceof FakeElement ? c.text() : c.text)).join('')
  }
}

function renderPage(model: unknown): FakeElement {
  const data = new FakeElement()
  data.textContent = JSON.stringify(model)
  const app = new FakeElement()
  const body = new FakeElement()
  const doc: PageDocument = {
    getElementById: (id) => (id === 'turnlog-data' ? data : id === 'app' ? app : null),
    createElement: () => new FakeElement(),
    createTextNode: (text) => ({ text }),
    body,
  }
  // the compiled script the HTML inlines, run with this document as its `document`
  new Function('document', inspectPageScript())(doc)
  return app
}

describe('shortened ids (item 18a)', () => {
  it(
    'incident: replay accepts the id as printed (…last 8 digits), its start, and says what is ambiguous or missing',
    async () => {
      // when
      const bySuffix = await pgRun(['replay', `…${plain.slice(-8)}`, '--json'])
      const byPrefix = await pgRun(['replay', plain.slice(0, 24), '--json'])
      const ambiguous = await pgRun(['replay', 'abcdef01'])
      const missing = await pgRun(['replay', '…ffffff99'])
      const tooShort = await pgRun(['replay', 'abcde', '--json'])
      // then
      expect(bySuffix.code).toBe(0)
      expect(bySuffix.json()).toMatchObject({ sessionId: plain })
      expect(byPrefix.json()).toMatchObject({ sessionId: plain })
      expect(ambiguous.code).toBe(2)
      expect(ambiguous.stderr).toMatch(new RegExp(`error AMBIGUOUS_ID: abcdef01 matches 2 sessions: ${twins[0]}, ${twins[1]}`))
      expect(missing.code).toBe(2)
      expect(missing.stderr).toMatch(/error SESSION_NOT_FOUND: no session id starts or ends with ffffff99/)
      expect(tooShort.code).toBe(2)
      expect(tooShort.json<{ error: { code: string } }>().error.code).toBe('INVALID_INPUT')
    },
    SLOW,
  )

  it(
    'every command that takes a session id takes a shortened one',
    async () => {
      // given
      const short = `…${plain.slice(-8)}`
      const html = join(dir, 'short.html')
      // when
      const audit = await pgRun(['audit', short, '--json'])
      const exported = await pgRun(['export', short, '-o', join(dir, 'short.jsonl'), '--json'])
      const inspected = await pgRun(['inspect', short, '--html', html, '--json'])
      const rebuilt = await pgRun(['rebuild', '--session', short, '--verify', '--json'])
      const tail = await pgRun(['tail', '--session', short, '--from', 'start', '--limit', '1', '--json'])
      // then
      expect(audit.code).toBe(0)
      expect(audit.json()).toMatchObject({ sessionsAudited: 1 })
      expect(exported.json()).toMatchObject({ sessions: 1 })
      expect(inspected.json()).toMatchObject({ sessionId: plain })
      expect(rebuilt.json()).toMatchObject({ sessions: 1, drift: [] })
      expect(tail.code).toBe(0)
      expect(JSON.parse(tail.stdout.trim())).toMatchObject({ sessionId: plain })
    },
    SLOW,
  )

  it(
    'class: any start or end of 6+ hex digits resolves to the one session it fits, or says ambiguous / not found',
    async () => {
      // given: more sessions whose ids share starts (UUIDv7: same millisecond) and random ones
      const ids = [plain, conflicted, ...twins]
      for (let i = 0; i < 10; i++)
        ids.push(
          await store.createSession({
            id: i % 2 === 0 ? newSessionId() : `abcdef01-0000-4000-8000-0000000001${String(i).padStart(2, '0')}`,
          }),
        )
      await fc.assert(
        fc.asyncProperty(
          fc.constantFrom(...ids),
          fc.boolean(),
          fc.integer({ min: 6, max: 36 }),
          fc.constantFrom('', '…', '...'),
          async (id, fromStart, length, mark) => {
            // given
            const fragment = fromStart ? id.slice(0, length) : id.slice(-length)
            const digits = fragment.replace(/-/g, '').length
            const all = (await store.sessions({ limit: 1000 })).sessions.map((s) => s.sessionId)
            const fits = all.filter((s) => s.startsWith(fragment) || s.endsWith(fragment))
            // when
            const outcome = await resolveSessionId(store, fromStart ? `${fragment}${mark}` : `${mark}${fragment}`).then(
              (r) => r as string,
              (e: unknown) => (e as { code: string }).code,
            )
            // then
            if (digits < 6) expect(outcome).toBe('INVALID_INPUT')
            else if (fits.length === 1 || length === 36) expect(outcome).toBe(id)
            else expect(outcome).toBe('AMBIGUOUS_ID')
          },
        ),
        { numRuns: 60 },
      )
      await fc.assert(
        fc.asyncProperty(fc.string({ maxLength: 40 }), async (text) => {
          const outcome = await resolveSessionId(store, text).then(
            () => 'resolved',
            (e: unknown) => (e as { code: string }).code,
          )
          expect(['resolved', 'INVALID_INPUT', 'SESSION_NOT_FOUND', 'AMBIGUOUS_ID']).toContain(outcome)
        }),
        { numRuns: 100 },
      )
    },
    SLOW,
  )
})

describe('which database (item 18b)', () => {
  it(
    'incident: `sessions` with no database configured creates no ./.turnlog and says what to do',
    async () => {
      // given
      const cwd = await mkdtemp(join(tmpdir(), 'turnlog-cli-nodb-'))
      try {
        // when
        const sessions = await runTurnlog(['sessions'], { cwd })
        const named = await runTurnlog(['--data-dir', 'typo', 'audit', '--all', '--json'], { cwd })
        // then
        expect(sessions.code).toBe(2)
        expect(sessions.stderr).toMatch(
          /turnlog: database: embedded .*\.turnlog \(default: none of --database-url, --data-dir, TURNLOG_DATABASE_URL, DATABASE_URL is set\)/,
        )
        expect(sessions.stderr).toMatch(/error DATABASE_NOT_FOUND: no turnlog database in .*\.turnlog \(the default embedded database/)
        expect(sessions.stderr).toMatch(/hint: Point at your database with --database-url/)
        expect(existsSync(join(cwd, '.turnlog'))).toBe(false)
        expect(named.code).toBe(2)
        expect(named.json<{ error: { code: string } }>().error.code).toBe('DATABASE_NOT_FOUND')
        expect(named.stderr).not.toMatch(/turnlog: database:/) // --json: only the error on stderr
        expect(existsSync(join(cwd, 'typo'))).toBe(false)
      } finally {
        await rm(cwd, { recursive: true, force: true })
      }
    },
    SLOW,
  )

  it(
    'every command names its database on stderr: Postgres with the password hidden, where the URL came from',
    async () => {
      // when
      const runs = await Promise.all([
        pgRun(['sessions']),
        pgRun(['replay', plain]),
        pgRun(['audit', '--all']),
        pgRun(['rebuild', '--verify']),
      ])
      // then
      for (const run of runs) {
        expect(run.code).toBe(0)
        expect(run.stderr).toMatch(/^turnlog: database: Postgres postgresql:\/\/\S+ \(--database-url\)$/m)
      }
    },
    SLOW,
  )
})

describe('one embedded directory, several CLI processes at once (item 1 through the CLI)', () => {
  it(
    '4 imports racing on a new directory: each imports or is refused with DATA_DIR_LOCKED; what was acknowledged is all there',
    async () => {
      // given: four different transcripts, and no database yet
      const base = await mkdtemp(join(tmpdir(), 'turnlog-cli-race-'))
      try {
        const files = [0, 1, 2, 3].map((i) => {
          const file = join(base, `chat-${i}.jsonl`)
          writeFileSync(file, [`{"role":"user","content":"question ${i}"}`, `{"role":"assistant","content":"answer ${i}"}`].join('\n'))
          return file
        })
        // when
        const runs = await Promise.all(files.map((f) => runTurnlog(['--data-dir', 'db', 'import', f, '--json'], { cwd: base })))
        const sessions = await runTurnlog(['--data-dir', 'db', 'sessions', '--json'], { cwd: base })
        const audit = await runTurnlog(['--data-dir', 'db', 'audit', '--all', '--json'], { cwd: base })
        // then
        const imported = runs.filter((r) => r.code === 0).map((r) => r.json<{ sessionId: string; appended: number }>())
        const refused = runs.filter((r) => r.code !== 0)
        for (const r of refused) {
          expect(r.code).toBe(3)
          expect(r.json<{ error: { code: string } }>().error.code).toBe('DATA_DIR_LOCKED')
        }
        expect(imported.length).toBeGreaterThanOrEqual(1)
        expect(imported.every((r) => r.appended === 2)).toBe(true)
        const listed = sessions.json<{ sessions: { sessionId: string; liveCount: number }[] }>().sessions
        expect(listed.map((s) => s.sessionId).sort()).toEqual(imported.map((r) => r.sessionId).sort())
        expect(listed.every((s) => s.liveCount === 2)).toBe(true)
        expect(audit.code).toBe(0)
        expect(audit.json()).toMatchObject({ sessionsAudited: imported.length, findings: [] })
      } finally {
        await rm(base, { recursive: true, force: true })
      }
    },
    SLOW,
  )
})

describe('conflicts in inspect and export (items 18c, 18d)', () => {
  it(
    'incident: inspect lists each of the 3 conflicts once, and its problem count matches the header',
    async () => {
      // given
      const model = await buildInspectModel(store, conflicted)
      expect(renderInspectHtml(model)).toContain(conflicted)
      // when
      const app = renderPage(model)
      // then
      const rows = app.all().filter((e) => e.attributes.has('data-finding'))
      const kinds = rows.map((e) => e.attributes.get('data-finding'))
      expect(kinds.filter((k) => k === 'message_conflict_attempt')).toHaveLength(3)
      expect(kinds.filter((k) => k === 'conflict')).toHaveLength(0)
      expect(rows).toHaveLength(model.findings.length)
      expect(app.text()).toContain(`⚠ ${model.findings.length} audit finding(s)`)
      expect(app.text()).toContain(`Problems (${rows.length})`)
    },
    SLOW,
  )

  it(
    'export says how many recorded conflicts it leaves behind (the format does not carry them)',
    async () => {
      // when
      const json = await pgRun(['export', conflicted, '-o', join(dir, 'c.jsonl'), '--json'])
      const human = await pgRun(['export', conflicted, '-o', join(dir, 'c2.jsonl')])
      const all = await pgRun(['export', '--all', '-o', join(dir, 'all.jsonl'), '--json'])
      const clean = await pgRun(['export', plain, '-o', join(dir, 'p.jsonl')])
      // then
      expect(json.json()).toMatchObject({ sessions: 1, conflictsNotExported: 3 })
      expect(all.json()).toMatchObject({ conflictsNotExported: 3 })
      expect(clean.stdout).not.toMatch(/conflict/)
      expect(human.stdout).toMatch(
        /; 3 recorded conflict\(s\) \(refused writes: audit evidence, `message_conflict_attempt`\) are not part of the export format and stay in this database only/,
      )
      expect(await readFile(join(dir, 'c.jsonl'), 'utf8')).not.toContain('changed 1')
    },
    SLOW,
  )
})

describe('a damaged embedded data directory through the CLI (item 12)', () => {
  it(
    'a file, a truncated pg_control, a missing pg_wal: exit 3, DATA_DIR_INVALID, what is wrong and what to do',
    async () => {
      // given
      const base = await mkdtemp(join(tmpdir(), 'turnlog-cli-damaged-'))
      try {
        const good = join(base, 'good')
        await makeMigratedDataDir(good) // a database as a first open leaves it (creating one: the race above)
        expect((await runTurnlog(['--data-dir', good, 'migrate'], { cwd: base })).code).toBe(0)
        writeFileSync(join(base, 'file'), 'x')
        cpSync(good, join(base, 'trunc'), { recursive: true })
        truncateSync(join(base, 'trunc', 'global', 'pg_control'), 100)
        cpSync(good, join(base, 'nowal'), { recursive: true })
        rmSync(join(base, 'nowal', 'pg_wal'), { recursive: true })
        mkdirSync(join(base, 'foreign'))
        writeFileSync(join(base, 'foreign', 'notes.txt'), 'x')
        // when
        const results = await Promise.all(
          ['file', 'trunc', 'nowal', 'foreign'].map((d) => runTurnlog(['--data-dir', d, 'sessions'], { cwd: base })),
        )
        // then
        const [file, trunc, nowal, foreign] = results
        for (const r of results) {
          expect(r?.code).toBe(3)
          expect(r?.stderr).toMatch(/error DATA_DIR_INVALID: the embedded data directory /)
          expect(r?.stderr).toMatch(/hint: Point --data-dir at the right directory/)
          expect(r?.stderr).not.toMatch(/INTERNAL|Aborted/)
        }
        expect(file?.stderr).toMatch(/is not a directory/)
        expect(trunc?.stderr).toMatch(/global\/pg_control is 100 bytes, not 8192/)
        expect(nowal?.stderr).toMatch(/the pg_wal directory is missing/)
        expect(foreign?.stderr).toMatch(/holds no database/)
      } finally {
        await rm(base, { recursive: true, force: true })
      }
    },
    SLOW,
  )
})
