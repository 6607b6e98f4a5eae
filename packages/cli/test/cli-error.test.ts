import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { ERROR_CODES } from '@turnlog/core'
import { thrownValueArb } from '@turnlog/testing'
import { CLI_ERROR_CODES, CliError, describeError } from '../src/cli-error.js'

describe('describeError', () => {
  it('maps usage-like library codes to exit 2 and the rest to exit 3, with a hint for a refused connection', () => {
    // given
    const refused = Object.assign(new Error('connection failure: connect ECONNREFUSED 127.0.0.1:1'), {
      name: 'TurnlogError',
      code: 'DB_TRANSIENT',
      details: { nodeCode: 'ECONNREFUSED' },
      cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:1'), { code: 'ECONNREFUSED' }),
    })
    const missing = Object.assign(new Error('session x not found'), { name: 'TurnlogError', code: 'SESSION_NOT_FOUND', details: {} })
    // when
    const a = describeError(refused, { kind: 'postgres', where: 'postgresql://u:***@127.0.0.1:1/db' })
    const b = describeError(missing)
    const c = describeError(new TypeError('boom'))
    // then
    expect(a).toMatchObject({ code: 'DB_TRANSIENT', exitCode: 3 })
    expect(a.hint).toMatch(/Nothing accepts connections at postgresql:\/\/u:\*\*\*@127\.0\.0\.1:1\/db\. Start the server/)
    expect(b).toMatchObject({ code: 'SESSION_NOT_FOUND', exitCode: 2 })
    expect(c).toMatchObject({ code: 'INTERNAL', exitCode: 3 })
  })
})

describe('the CLI code list', () => {
  it('docs/cli.md lists exactly the codes of CLI_ERROR_CODES, INTERNAL included, with the exit code each gets', () => {
    // given
    const doc = readFileSync(fileURLToPath(new URL('../../../docs/cli.md', import.meta.url)), 'utf8')
    const section = doc.slice(doc.indexOf('The CLI adds its own'), doc.indexOf('## Commands'))
    const rows = [...section.matchAll(/^\| `([A-Z_]+)` \| .* \| (\d) \|$/gm)].map((m) => [m[1], Number(m[2])] as const)
    // then
    expect(rows.map(([code]) => code).sort()).toEqual(Object.keys(CLI_ERROR_CODES).sort())
    for (const [code, exit] of rows) {
      if (code === 'INTERNAL') expect(describeError(new Error('x')).exitCode).toBe(exit)
      else expect(new CliError(code as keyof typeof CLI_ERROR_CODES, 'x').exitCode).toBe(exit)
    }
  })

  it('library codes the CLI can print are documented in docs/errors.md with DATA_DIR_LOCKED and DATA_DIR_INVALID exiting 3', () => {
    const errors = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8')
    for (const code of ['DATA_DIR_LOCKED', 'DATA_DIR_INVALID']) {
      expect(errors).toContain(`| \`${code}\` |`)
      expect(describeError(Object.assign(new Error('x'), { name: 'TurnlogError', code, details: {} })).exitCode).toBe(3)
    }
  })
})

describe('the CLI error codes', () => {
  const cliDoc = readFileSync(fileURLToPath(new URL('../../../docs/cli.md', import.meta.url)), 'utf8')

  it('list every code describeError can print for a value that is no library error (regression: INTERNAL was missing)', () => {
    // given any thrown value that is not a TurnlogError (plain errors, node errors, strings, objects, …)
    fc.assert(
      fc.property(
        thrownValueArb(fc.constantFrom('ENOENT', 'EACCES', 'EPIPE').map((c) => Object.assign(new Error(c), { code: c }))),
        (thrown) => {
          // when the CLI describes it
          const report = describeError(thrown)
          // then its code is one of the CLI's own codes (or a library code when the value is a TurnlogError)
          expect(report.code in CLI_ERROR_CODES || report.code in ERROR_CODES).toBe(true)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('are the codes of the table in docs/cli.md, each once', () => {
    // given the table under "The CLI adds its own"
    const table = cliDoc.slice(cliDoc.indexOf('The CLI adds its own'), cliDoc.indexOf('## Commands'))
    // when we read its code column
    const documented = [...table.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1])
    // then it is exactly the code list
    expect(documented).toEqual(Object.keys(CLI_ERROR_CODES))
  })
})
