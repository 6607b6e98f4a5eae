import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ERROR_CODES, MESSAGE_CONFLICT_REASONS } from '@turnlog/core'

const doc = readFileSync(fileURLToPath(new URL('../../../docs/errors.md', import.meta.url)), 'utf8')

describe('docs/errors.md', () => {
  it('documents every registered error code', () => {
    // given the registry; when we look each code up in the doc's table; then none is missing
    const missing = Object.keys(ERROR_CODES).filter((code) => !doc.includes(`| \`${code}\` |`))
    expect(missing).toEqual([])
  })

  it('documents no code that does not exist', () => {
    const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1])
    expect(documented.filter((c) => c !== undefined && !(c in ERROR_CODES))).toEqual([])
  })

  it('lists each code in one row only (two rows for one code drift apart)', () => {
    // given every code row of the doc's tables
    const documented = [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1] as string)
    // when we count the rows per code
    const repeated = [...new Set(documented.filter((c, i) => documented.indexOf(c) !== i))]
    // then no code has a second row
    expect(repeated).toEqual([])
  })

  it('names every MESSAGE_CONFLICT reason in the MESSAGE_CONFLICT row (regression: the importer used seq_mismatch outside the type)', () => {
    // given the MESSAGE_CONFLICT row
    const row = doc.split('\n').find((l) => l.startsWith('| `MESSAGE_CONFLICT` |')) ?? ''
    // then each reason a MESSAGE_CONFLICT can carry is named there
    expect(MESSAGE_CONFLICT_REASONS.filter((r) => !row.includes(`'${r}'`))).toEqual([])
  })
})
