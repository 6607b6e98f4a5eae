/**
 * packages/cli/README.md, the promises no other CLI test pinned down (an audit of the README, promise
 * by promise), each held against the built `turnlog` binary run as a child process:
 *
 * - "`src/commands/run-*.ts`: one runner per command, loaded only when its command runs, so `--help`
 *   and usage errors load no database code": a module-resolution hook logs every module the process
 *   loads; help and usage errors (an unknown command or option, a value outside `choices`) resolve no
 *   runner, nothing of `@turnlog/postgres`, `pg`, PGlite or kysely, and exit 0 or 2; a command that
 *   runs does load them (the hook's own control).
 * - "`exitOverride`, which turns every parse error into an exception so `runCli` can map it to exit
 *   code 2": every `choices` option (`--view`, `--fail-on`, `--format`) refuses another value with 2,
 *   and creates no embedded database.
 * - "we give it stderr only when stderr is a TTY and `--json` is off, so pipes, CI logs and machine
 *   output stay clean": `rebuild`, `audit --all` and `export --all` draw their bar on a terminal
 *   (a pseudo-terminal through `script`), and draw nothing under `--json` or into a pipe.
 */
import { spawn } from 'node:child_process'
import { existsSync } from 'node:fs'
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { BIN, runTurnlog } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

/** Per-test timeout: each test spawns the binary several times, and a loaded CI runner is slow. */
const SLOW = 90_000

/** Modules that are database code: the store package, the drivers, the query builder, the runners. */
const DATABASE_CODE = [
  /\/packages\/postgres\//,
  /\/node_modules\/pg\//,
  /\/@electric-sql\/pglite\//,
  /\/node_modules\/kysely\//,
  /\/commands\/run-/,
]

let db: TestDatabase
let dir: string
let hooks: string

useDatabaseAndDir('turnlog-cli-readme-', (made) => {
  ;({ db, dir } = made)
})

beforeAll(async () => {
  // a resolve hook that appends every module URL the process resolves to the file in $MODULE_LOG
  hooks = await mkdtemp(join(tmpdir(), 'turnlog-cli-hooks-'))
  await writeFile(
    join(hooks, 'hooks.mjs'),
    `import { appendFileSync } from 'node:fs'
export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context)
  appendFileSync(process.env.MODULE_LOG, resolved.url + '\\n')
  return resolved
}
`,
  )
  await writeFile(join(hooks, 'register.mjs'), `import { register } from 'node:module'\nregister('./hooks.mjs', import.meta.url)\n`)
})

afterAll(async () => {
  await rm(hooks, { recursive: true, force: true })
})

/** Runs the binary with the module hook; resolves with the exit code and the resolved module URLs. */
async function runLogged(args: readonly string[], cwd: string): Promise<{ code: number; modules: string[] }> {
  const log = join(hooks, `modules-${Date.now()}-${Math.random().toString(16).slice(2)}.log`)
  await writeFile(log, '')
  const run = await runTurnlog(args, { cwd, env: { MODULE_LOG: log, NODE_OPTIONS: `--import=${join(hooks, 'register.mjs')}` } })
  return { code: run.code, modules: (await readFile(log, 'utf8')).split('\n').filter(Boolean) }
}

/**
 * Runs the binary under a pseudo-terminal (`script`), so its stdout and stderr are a TTY; resolves
 * with the exit code and everything the terminal received (both streams).
 */
function runOnTerminal(args: readonly string[], cwd: string): Promise<{ code: number; screen: string }> {
  const quote = (s: string): string => `'${s.replace(/'/g, `'\\''`)}'`
  const command = [process.execPath, BIN, ...args].map(quote).join(' ')
  const env: Record<string, string | undefined> = { ...process.env, NODE_OPTIONS: '', TERM: 'xterm', COLUMNS: '120' }
  delete env['TURNLOG_DATABASE_URL']
  delete env['DATABASE_URL']
  return new Promise((resolve, reject) => {
    const child = spawn('script', ['-q', '-e', '-c', command, '/dev/null'], { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] })
    let screen = ''
    child.stdout.setEncoding('utf8').on('data', (d: string) => (screen += d))
    child.stderr.setEncoding('utf8').on('data', (d: string) => (screen += d))
    child.on('error', reject)
    child.on('close', (code) => resolve({ code: code ?? -1, screen }))
  })
}

describe('packages/cli/README.md, promise by promise', () => {
  it(
    '--help and usage errors load no database code (no runner, no @turnlog/postgres, pg, PGlite or kysely); a command that runs does',
    async () => {
      // given: an empty working directory (the embedded default would be ./.turnlog/)
      const cases: { args: string[]; code: number }[] = [
        { args: ['--help'], code: 0 },
        { args: ['audit', '--help'], code: 0 },
        { args: ['help', 'export'], code: 0 },
        { args: ['--version'], code: 0 },
        { args: [], code: 2 },
        { args: ['frobnicate'], code: 2 },
        { args: ['sessions', '--no-such-option'], code: 2 },
        { args: ['replay', 'abcdef', '--view', 'bogus'], code: 2 },
        { args: ['audit', '--all', '--fail-on', 'fatal'], code: 2 },
        { args: ['import', 'missing.jsonl', '--format', 'csv'], code: 2 },
      ]

      for (const c of cases) {
        // when
        const run = await runLogged(c.args, dir)

        // then: the documented exit code; the hook saw the CLI load, and no database code
        expect({ args: c.args, code: run.code }).toEqual({ args: c.args, code: c.code })
        expect(run.modules.some((m) => m.endsWith('/packages/cli/dist/run-cli.js'))).toBe(true)
        expect({ args: c.args, loaded: run.modules.filter((m) => DATABASE_CODE.some((re) => re.test(m))) }).toEqual({
          args: c.args,
          loaded: [],
        })
      }
      expect(existsSync(join(dir, '.turnlog'))).toBe(false)

      // and: the control: a command that runs (on a missing embedded directory) loads its runner and the store
      const control = await runLogged(['sessions'], dir)
      expect(control.code).toBe(2)
      expect(control.modules.some((m) => /\/commands\/run-sessions\.js$/.test(m))).toBe(true)
      expect(control.modules.some((m) => /\/packages\/postgres\//.test(m))).toBe(true)
      expect(existsSync(join(dir, '.turnlog'))).toBe(false)
    },
    SLOW,
  )

  it(
    'a value outside choices (--view, --fail-on, --format) is exit 2 before any database is opened, also with --json',
    async () => {
      // given: an unreachable database URL (a usage error must not get as far as connecting)
      const unreachable = 'postgresql://nobody@127.0.0.1:1/nowhere'
      const cases = [
        ['replay', 'abcdef', '--view', 'timeline'],
        ['audit', '--all', '--fail-on', 'fatal'],
        ['import', 'missing.jsonl', '--format', 'csv'],
      ]

      for (const args of cases) {
        // when
        const human = await runTurnlog(['--database-url', unreachable, ...args], { cwd: dir })
        const json = await runTurnlog(['--json', '--database-url', unreachable, ...args], { cwd: dir })

        // then: usage (2), the allowed choices named, never a connection error (3)
        expect(human.code).toBe(2)
        expect(human.stderr).toMatch(/Allowed choices are/)
        expect(json.code).toBe(2)
        expect(json.json<{ error: { code: string } }>().error.code).toBe('USAGE')
      }
      expect(existsSync(join(dir, '.turnlog'))).toBe(false)
    },
    SLOW,
  )

  it(
    'the progress bar is drawn on stderr only on a terminal and without --json: rebuild, audit --all, export --all',
    async () => {
      // given: a migrated database with a few sessions
      const url = db.connectionString
      const store = await openStore({ connectionString: url })
      try {
        for (let i = 0; i < 3; i++) {
          const session = await store.createSession()
          await store.append(session, [createMessage({ role: 'user', content: `question ${i}` })])
          await store.append(session, [createMessage({ role: 'assistant', content: `answer ${i}` })])
        }
      } finally {
        await store.close()
      }
      const exported = join(dir, 'bar-export.jsonl')
      const commands: { args: string[]; title: string }[] = [
        { args: ['rebuild'], title: 'rebuilding [' },
        { args: ['audit', '--all'], title: 'auditing [' },
        { args: ['export', '--all', '-o', exported], title: 'exporting [' },
      ]

      for (const c of commands) {
        // when: on a terminal, on a terminal with --json, and into a pipe
        const terminal = await runOnTerminal(['--database-url', url, ...c.args], dir)
        const terminalJson = await runOnTerminal(['--database-url', url, '--json', ...c.args], dir)
        const piped = await runTurnlog(['--database-url', url, ...c.args], { cwd: dir })

        // then: the bar (its title and its frame) only on the terminal without --json
        expect({ args: c.args, code: terminal.code, bar: terminal.screen.includes(c.title) }).toEqual({ args: c.args, code: 0, bar: true })
        expect({ args: c.args, code: terminalJson.code, bar: terminalJson.screen.includes(c.title) }).toEqual({
          args: c.args,
          code: 0,
          bar: false,
        })
        expect(JSON.parse(terminalJson.screen.slice(terminalJson.screen.indexOf('{')))).toEqual(expect.any(Object))
        expect(piped.code).toBe(0)
        expect(piped.stderr).not.toContain(c.title)
        expect(piped.stderr).not.toContain('\u001b[')
      }
    },
    SLOW,
  )
})
