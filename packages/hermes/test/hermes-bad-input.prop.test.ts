/**
 * Garbage in, typed errors out, for `importHermes`: paths to files that are not a hermes state.db (a
 * text file, an empty file, a truncated SQLite header, a directory, missing paths, SQLite files without
 * `messages` or with too few columns, `''`, `:memory:`, `/dev/null`, garbage) and bad options. Each call
 * either imports the state.db (every session's live view equals hermes' active rows; `onProgress` is
 * called once per session) or rejects with a TurnlogError whose code is one an input error may get:
 * never a raw error, never `DB_ERROR`, never a hang, and a refused call changes nothing. Runs on
 * Postgres, and a smaller run on embedded PGlite. (Split from the audit package's bad-input test when the
 * importer became its own package; the assertions are the same.)
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import fc from 'fast-check'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import {
  IMPORT_INPUT_CODES,
  OutcomeTally,
  buildKit,
  createTestDatabase,
  garbageArb,
  isRecordingProgress,
  openTestStore,
  recordingProgress,
  safeTextArb,
  settle,
  sqlArb,
  storeSnapshot,
  weirdStringArb,
  type Build as KitBuild,
  type TestDatabase,
} from '@turnlog/testing'
import { importHermes, type HermesImportResult } from '@turnlog/hermes'
import { HermesFixture } from './hermes-fixture.js'

/** What a generated argument can refer to: the progress reports the run's onProgress received. */
interface Ctx {
  readonly progress: unknown[]
}

type Build<T = unknown> = KitBuild<Ctx, T>

const { build, lit, mostly, maybeUndefined, objectOf } = buildKit<Ctx>()

const recording = recordingProgress(build)

const tally: OutcomeTally = new OutcomeTally(IMPORT_INPUT_CODES)

let dir: string
let targetDb: TestDatabase
let target: PostgresStore
/** Paths importHermes gets: one real state.db and things that are not. */
let paths: Record<string, string>

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-hermes-bad-input-'))
  targetDb = await createTestDatabase({ migrated: true })
  target = await openStore({ connectionString: targetDb.connectionString })

  // a state.db, and paths that are not one
  const state = new HermesFixture(join(dir, 'state.db'))
  state.session('h1', { title: 'bad input' })
  state.add('h1', { role: 'user', content: 'hello \u0000 there' })
  state.add('h1', { role: 'assistant', content: 'hi', finish_reason: 'stop' })
  state.session('h2')
  state.add('h2', { role: 'user', content: 'second session' })
  state.close()
  await writeFile(join(dir, 'not-sqlite.db'), 'this is plain text, not SQLite\n'.repeat(50))
  await writeFile(join(dir, 'empty.db'), '')
  await writeFile(join(dir, 'truncated.db'), 'SQLite format 3\u0000'.padEnd(100, '\u0001'))
  await mkdir(join(dir, 'a-directory'))
  const noMessages = new Database(join(dir, 'no-messages.db'))
  noMessages.exec('create table sessions (id text primary key, started_at real)')
  noMessages.close()
  const fewColumns = new Database(join(dir, 'few-columns.db'))
  fewColumns.exec('create table messages (id integer primary key, role text)')
  fewColumns.close()
  paths = {
    state: join(dir, 'state.db'),
    notSqlite: join(dir, 'not-sqlite.db'),
    empty: join(dir, 'empty.db'),
    truncated: join(dir, 'truncated.db'),
    directory: join(dir, 'a-directory'),
    missing: join(dir, 'missing.db'),
    missingDir: join(dir, 'no-such-dir', 'state.db'),
    noMessages: join(dir, 'no-messages.db'),
    fewColumns: join(dir, 'few-columns.db'),
  }
}, 60_000)

afterAll(async () => {
  await target?.close()
  await targetDb?.drop()
  await rm(dir, { recursive: true, force: true })
  console.log(tally.report('hermes bad-input'))
})

interface HermesCall {
  readonly path: Build
  readonly options: Build
}

const importHermesArb: fc.Arbitrary<HermesCall> = fc.record({
  path: fc.oneof(
    { weight: 2, arbitrary: fc.constant(build('<state>', () => paths['state'])) },
    {
      weight: 3,
      arbitrary: fc
        .constantFrom('notSqlite', 'empty', 'truncated', 'directory', 'missing', 'missingDir', 'noMessages', 'fewColumns')
        .map((k) => build(`<${k}>`, () => paths[k])),
    },
    {
      weight: 1,
      arbitrary: lit(
        fc.constantFrom<unknown>('', ':memory:', 'file::memory:', '/', '.', '\u0000', 'state.db\u0000.txt', '/dev/null', '/proc/self/mem'),
      ),
    },
    { weight: 1, arbitrary: lit(fc.oneof(sqlArb, weirdStringArb, garbageArb)) },
  ),
  options: maybeUndefined(
    mostly(
      objectOf({
        tenantId: mostly(lit(fc.oneof(fc.constant('hermes-tenant'), safeTextArb, weirdStringArb)), 4),
        sessions: mostly(lit(fc.oneof(fc.subarray(['h1', 'h2', 'h3']), fc.array(weirdStringArb, { maxLength: 2 }))), 4),
        onProgress: fc.oneof({ weight: 4, arbitrary: fc.constant(recording) }, { weight: 1, arbitrary: lit(garbageArb) }),
      }),
      6,
    ),
  ),
})

/** Runs one importHermes call against `store` and checks the rule. */
async function runImport(store: PostgresStore, call: HermesCall): Promise<void> {
  const ctx: Ctx = { progress: [] }
  const before = await storeSnapshot(store, false)
  const path = call.path(ctx)
  const options = call.options(ctx) as { onProgress?: unknown } | undefined
  const outcome = await settle(60_000, 'importHermes', () => importHermes(store, path as never, options as never))
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
  if (outcome.ok) {
    tally.count('importHermes ok')
    const result: HermesImportResult = outcome.value
    expect(path).toBe(paths['state'])
    for (const s of result.sessions) expect(s.liveMatches).toBe(true)
    if (isRecordingProgress(options)) expect(ctx.progress).toHaveLength(result.sessions.length)
    return
  }
  tally.checkRejection('importHermes', outcome.error)
  expect(await storeSnapshot(store, false)).toBe(before)
}

// cases every run includes (fast-check `examples`): each once escaped raw, reached the database, or half-wrote
const value = (v: unknown): Build =>
  build(
    () => (v === null ? 'null' : fc.stringify(v)),
    () => v,
  )
const EXAMPLES: [HermesCall][] = [
  [{ path: build('<state>', () => paths['state']), options: value({ sessions: 5 }) }],
  [{ path: build('<state>', () => paths['state']), options: value({ sessions: new Array(1) }) }],
  [{ path: build('<state>', () => paths['state']), options: value({ onProgress: 'yes' }) }],
  [{ path: build('<state>', () => paths['state']), options: value(null) }],
  [{ path: build('<directory>', () => paths['directory']), options: value(undefined) }],
  [{ path: build('<notSqlite>', () => paths['notSqlite']), options: value(undefined) }],
  [{ path: build('<missing>', () => paths['missing']), options: value(undefined) }],
]

describe('importHermes: garbage paths and options', () => {
  it('on Postgres: imported with every live view equal to hermes, or refused with an input error code and nothing written', async () => {
    await fc.assert(
      fc.asyncProperty(importHermesArb, (call) => runImport(target, call)),
      { numRuns: Number(process.env['TURNLOG_HERMES_BAD_INPUT_RUNS'] ?? 60), examples: EXAMPLES },
    )
  }, 120_000)

  it('on PGlite: the same, a smaller run', async () => {
    const { store, close } = await openTestStore('pglite')
    try {
      await fc.assert(
        fc.asyncProperty(importHermesArb, (call) => runImport(store, call)),
        { numRuns: 20, examples: EXAMPLES },
      )
    } finally {
      await close()
    }
  }, 120_000)
})
