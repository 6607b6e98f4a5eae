/**
 * docs/cli.md: "`--json`: machine output: exactly one JSON document on stdout, nothing else there".
 * The incident: `turnlog --json --version` printed `0.1.0` and `turnlog --json --help` (and
 * `turnlog <command> --help --json`, `turnlog help <command> --json`) the plain help text, which a
 * script piping into `jq` cannot read. Under `--json` they print one JSON object, exit 0 as before,
 * with stderr empty; without `--json` they print the text as before. Held against the built binary,
 * and in-process through `runCli` of the sources (last block: what the mutation check can reach).
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { runTurnlog } from './support/run-turnlog.js'
import { runCliInProcess, type InProcessRun } from './support/run-cli-in-process.js'

const SLOW = 60_000

interface HelpDocument {
  readonly command: string
  readonly usage: string
  readonly description: string
  readonly arguments: readonly { name: string; required: boolean; variadic: boolean; description: string }[]
  readonly options: readonly { flags: string; description: string; default?: unknown; choices?: readonly string[] }[]
  readonly commands: readonly { name: string; usage: string; description: string }[]
  readonly help: string
}

let dir: string
let version: string

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'turnlog-json-help-'))
  version = (JSON.parse(await readFile(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version
})

afterAll(async () => {
  await rm(dir, { recursive: true, force: true })
})

describe('--json with --version and --help: one JSON object on stdout (incident: plain text under --json)', () => {
  it(
    '--version under --json, before or after it, long or short: {"version"}, exit 0, stderr empty; without --json the bare version',
    async () => {
      for (const args of [
        ['--json', '--version'],
        ['--version', '--json'],
        ['--json', '-V'],
      ]) {
        // when
        const run = await runTurnlog(args, { cwd: dir })

        // then
        expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' })
        expect(run.stdout.endsWith('}\n')).toBe(true)
        expect(run.json()).toEqual({ version })
      }
      const plain = await runTurnlog(['--version'], { cwd: dir })
      expect(plain).toMatchObject({ code: 0, stdout: `${version}\n` })
    },
    SLOW,
  )

  it(
    '--help under --json: the program as one object (usage, options, commands, the help text), exit 0, stderr empty',
    async () => {
      // given: the help as text
      const text = await runTurnlog(['--help'], { cwd: dir })

      for (const args of [
        ['--json', '--help'],
        ['--help', '--json'],
        ['--json', 'help'],
      ]) {
        // when
        const run = await runTurnlog(args, { cwd: dir })

        // then
        expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' })
        const doc = run.json<HelpDocument>()
        expect(doc.command).toBe('turnlog')
        expect(doc.usage).toBe('turnlog [options] [command]')
        expect(doc.help).toBe(text.stdout)
        expect(doc.options.map((o) => o.flags)).toEqual([
          '-V, --version',
          '--database-url <url>',
          '--data-dir <dir>',
          '--json',
          '-h, --help',
        ])
        expect(doc.commands.map((c) => c.name)).toEqual([
          'demo',
          'migrate',
          'sessions',
          'replay',
          'rebuild',
          'audit',
          'export',
          'import',
          'inspect',
          'tail',
          'help',
        ])
        expect(doc.commands.find((c) => c.name === 'replay')).toEqual({
          name: 'replay',
          usage: 'turnlog replay [options] <session>',
          description: expect.stringMatching(/^print a session/),
        })
      }
    },
    SLOW,
  )

  it(
    "a command's help under --json (`<command> --help --json`, `--json help <command>`): its arguments and options with defaults and choices",
    async () => {
      // given
      const text = await runTurnlog(['replay', '--help'], { cwd: dir })

      for (const args of [
        ['replay', '--help', '--json'],
        ['--json', 'replay', '--help'],
        ['--json', 'help', 'replay'],
        ['help', 'replay', '--json'],
      ]) {
        // when
        const run = await runTurnlog(args, { cwd: dir })

        // then
        expect({ args, code: run.code, stderr: run.stderr }).toEqual({ args, code: 0, stderr: '' })
        const doc = run.json<HelpDocument>()
        expect(doc).toMatchObject({
          command: 'turnlog replay',
          usage: 'turnlog replay [options] <session>',
          commands: [],
          help: text.stdout,
        })
        expect(doc.arguments).toEqual([{ name: 'session', required: true, variadic: false, description: 'session id' }])
        expect(doc.options.find((o) => o.flags === '--view <view>')).toEqual({
          flags: '--view <view>',
          description: 'what to show',
          default: 'live',
          choices: ['live', 'transcript', 'wire'],
        })
        expect(doc.options.find((o) => o.flags === '--at <version>')).toEqual({
          flags: '--at <version>',
          description: 'time travel: the session as of this version',
        })
      }
    },
    SLOW,
  )

  it(
    'no command under --json is still a usage error (the error document, exit 2); an unknown command with --help shows the program help, as JSON',
    async () => {
      // when
      const none = await runTurnlog(['--json'], { cwd: dir })
      const unknown = await runTurnlog(['--json', 'frobnicate', '--help'], { cwd: dir })

      // then
      expect(none.code).toBe(2)
      expect(none.json()).toMatchObject({ error: { code: 'USAGE', message: 'a command is required' } })
      expect(unknown.code).toBe(0)
      expect(unknown.json<HelpDocument>().command).toBe('turnlog')
    },
    SLOW,
  )
})

describe('the same in-process (runCli of the sources)', () => {
  const cli = (argv: string[]): Promise<InProcessRun> => runCliInProcess(argv, dir)

  it('--json --version and replay --help --json: one JSON object each on stdout, exit 0, stderr empty', async () => {
    // when
    const versionRun = await cli(['--json', '--version'])
    const help = await cli(['replay', '--help', '--json'])

    // then
    expect([versionRun.code, versionRun.err]).toEqual([0, ''])
    expect(JSON.parse(versionRun.out)).toEqual({ version })
    expect([help.code, help.err]).toEqual([0, ''])
    const document = JSON.parse(help.out) as HelpDocument
    expect(document.command).toBe('turnlog replay')
    expect(document.help).toContain('Usage: turnlog replay')
  })
})
