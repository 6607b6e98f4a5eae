import { describe, expect, it } from '@jest/globals'
import type { CliIo } from '../src/cli-io.js'
import { runCli } from '../src/run-cli.js'

async function run(argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = ''
  let err = ''
  const io: CliIo = { out: (t) => (out += t), err: (t) => (err += t), progressStream: undefined, env: {}, cwd: '/nonexistent' }
  const code = await runCli(argv, io)
  return { code, out, err }
}

describe('runCli: help, version and usage errors (no database involved)', () => {
  it('help and --version exit 0; help lists the exit codes and the database order', async () => {
    // when
    const help = await run(['--help'])
    const helpCommand = await run(['help', 'replay'])
    const version = await run(['--version'])
    // then
    expect(help.code).toBe(0)
    expect(help.out).toMatch(/Exit codes:\n {2}0 {2}success/)
    expect(help.out).toMatch(/\$TURNLOG_DATABASE_URL[\s\S]*\$DATABASE_URL[\s\S]*\.\/\.turnlog\//)
    expect(helpCommand.code).toBe(0)
    expect(helpCommand.out).toMatch(/--view <view>/)
    expect(version).toMatchObject({ code: 0, out: expect.stringMatching(/^\d+\.\d+\.\d+\n$/) })
  })

  it('usage errors exit 2; under --json stdout carries one JSON error document', async () => {
    // when
    const none = await run(['--json'])
    const unknown = await run(['frobnicate'])
    const badLimit = await run(['sessions', '--limit', '0', '--json'])
    const badView = await run(['replay', 'x', '--view', 'html'])
    const missingHtml = await run(['inspect', '0190c5e2-7b1c-7a33-9f00-1234567890ab'])
    // then
    expect(none.code).toBe(2)
    expect(JSON.parse(none.out)).toEqual({
      error: {
        code: 'USAGE',
        message: 'a command is required',
        hint: 'Run `turnlog --help` or `turnlog <command> --help` for usage.',
        cause: null,
        details: {},
      },
    })
    expect(unknown.code).toBe(2)
    expect(unknown.err).toMatch(/unknown command 'frobnicate'/)
    expect(badLimit.code).toBe(2)
    expect(JSON.parse(badLimit.out).error.message).toMatch(/expected an integer from 1 to 1000/)
    expect(badView.code).toBe(2)
    expect(badView.err).toMatch(/Allowed choices are live, transcript, wire/)
    expect(missingHtml.code).toBe(2)
    expect(missingHtml.err).toMatch(/required option '--html <file>'/)
  })
})
