/**
 * `@turnlog/hermes` is an optional peer of the CLI (it brings the native better-sqlite3). Installed the
 * way a user installs it (the built CLI in a `node_modules` of its own, with its dependencies and
 * nothing else), `turnlog import` of a hermes state.db fails with one line that names the package to
 * install, before it opens any database; with `@turnlog/hermes` installed next to it, the same command
 * imports.
 */
import { cp, mkdir, mkdtemp, readFile, rm, symlink } from 'node:fs/promises'
import { existsSync, realpathSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import Database from 'better-sqlite3'
import { runTurnlog } from './support/run-turnlog.js'

const cliDir = join(dirname(fileURLToPath(import.meta.url)), '..')

let root: string
let work: string
let bin: string
let installed: string
let db: TestDatabase | undefined

beforeAll(async () => {
  root = await mkdtemp(join(tmpdir(), 'turnlog-cli-install-'))
  // the CLI as an install puts it: its package.json and dist, its dependencies linked beside it
  installed = join(root, 'node_modules', '@turnlog', 'cli')
  await mkdir(join(installed, 'node_modules', '@turnlog'), { recursive: true })
  await cp(join(cliDir, 'package.json'), join(installed, 'package.json'))
  await cp(join(cliDir, 'dist'), join(installed, 'dist'), { recursive: true })
  const pkg = JSON.parse(await readFile(join(cliDir, 'package.json'), 'utf8')) as { dependencies: Record<string, string> }
  for (const name of Object.keys(pkg.dependencies)) {
    await symlink(realpathSync(join(cliDir, 'node_modules', name)), join(installed, 'node_modules', name), 'dir')
  }
  bin = join(installed, 'dist', 'bin.js')
  work = join(root, 'work')
  await mkdir(work)
  const sqlite = new Database(join(work, 'state.db'))
  sqlite.exec(`
    create table sessions (id text primary key, source text, started_at real, title text);
    create table messages (id integer primary key, session_id text, role text, content text, timestamp real, active integer default 1, compacted integer default 0);
    insert into sessions (id, source, started_at, title) values ('s1', 'cli', 1735732800, 'hermes session');
    insert into messages (session_id, role, content, timestamp) values ('s1', 'user', 'hello', 1735732801), ('s1', 'assistant', 'hi', 1735732802);
  `)
  sqlite.close()
})

afterAll(async () => {
  await db?.drop()
  await rm(root, { recursive: true, force: true })
})

describe('turnlog import of a hermes state.db, as installed', () => {
  it('without @turnlog/hermes: one error line naming the package to install, exit 3, no database opened', async () => {
    // given: the installed CLI cannot resolve @turnlog/hermes
    expect(existsSync(join(installed, 'node_modules', '@turnlog', 'hermes'))).toBe(false)
    // when
    const detected = await runTurnlog(['import', 'state.db'], { cwd: work, bin })
    const explicit = await runTurnlog(['import', 'state.db', '--format', 'hermes', '--json'], { cwd: work, bin })
    // then
    expect(detected.code).toBe(3)
    expect(detected.stdout).toBe('')
    expect(detected.stderr).toBe(
      'turnlog: error PACKAGE_MISSING: importing a hermes state.db needs the @turnlog/hermes package, which is not installed: install it next to turnlog (npm install @turnlog/hermes)\n',
    )
    expect(explicit.code).toBe(3)
    expect(explicit.json<{ error: { code: string; message: string } }>().error).toMatchObject({
      code: 'PACKAGE_MISSING',
      message: expect.stringContaining('npm install @turnlog/hermes'),
    })
    expect(existsSync(join(work, '.turnlog'))).toBe(false)
  }, 120_000)

  it('with @turnlog/hermes installed beside it: the same command imports', async () => {
    // given
    await symlink(
      realpathSync(join(cliDir, 'node_modules', '@turnlog', 'hermes')),
      join(installed, 'node_modules', '@turnlog', 'hermes'),
      'dir',
    )
    db = await createTestDatabase()
    // when
    const run = await runTurnlog(['--database-url', db.connectionString, 'import', 'state.db', '--json'], { cwd: work, bin })
    // then
    expect(run.stderr).toBe('')
    expect(run.code).toBe(0)
    expect(run.json<{ format: string; sessions: { appended: number; liveMatches: boolean }[] }>()).toMatchObject({
      format: 'hermes',
      sessions: [{ appended: 2, liveMatches: true }],
    })
  }, 120_000)
})
