import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { ERROR_CODES } from '@turnlog/core'

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
})
