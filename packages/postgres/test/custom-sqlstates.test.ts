import { describe, expect, it } from '@jest/globals'
import { readFileSync, readdirSync } from 'node:fs'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { ERROR_CODES } from '@turnlog/core'
import { CUSTOM_SQLSTATES, customSqlState, lostMessageIdRace, mapDatabaseError, type CustomSqlState } from '@turnlog/postgres/internal'

const packagesDir = fileURLToPath(new URL('../../', import.meta.url))

/** Every `.ts` and `.sql` file under `dir`, recursively. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) => {
    const path = join(dir, d.name)
    if (d.isDirectory()) return d.name === 'node_modules' || d.name === 'dist' ? [] : sources(path)
    return /\.(ts|sql)$/.test(d.name) ? [path] : []
  })
}

// every package's src/, and the store's schema (packages/postgres/sql, one file per object)
const srcFiles = readdirSync(packagesDir).flatMap((p) =>
  ['src', 'sql'].flatMap((dir) => {
    try {
      return sources(join(packagesDir, p, dir))
    } catch {
      return []
    }
  }),
)
const states = Object.keys(CUSTOM_SQLSTATES) as CustomSqlState[]

describe('the one table of custom SQLSTATEs', () => {
  it('holds exactly the TL states the SQL raises, each mapped to a registered error code', () => {
    // given every `errcode = 'TL…'` in the store's SQL (the sql/ files and any SQL in migrations)
    const raised = new Set(
      srcFiles.flatMap((f) => [...readFileSync(f, 'utf8').matchAll(/errcode\s*=\s*'(TL[0-9A-Z]{3})'/gi)].map((m) => m[1] as string)),
    )
    // then the table is that set, and each state maps to a code of the registry
    expect([...raised].sort()).toEqual([...states].sort())
    for (const s of states) expect(CUSTOM_SQLSTATES[s] in ERROR_CODES).toBe(true)
  })

  it('knows every TL state the TypeScript compares against', () => {
    // given every 'TL…' string literal in the sources of every package
    const used = srcFiles.flatMap((f) =>
      [...readFileSync(f, 'utf8').matchAll(/'(TL[0-9A-Z]{3})'/g)].map((m) => ({ f, state: m[1] as string })),
    )
    // then none names a state outside the table (a typo would never match a real error)
    expect(used.filter((u) => !(u.state in CUSTOM_SQLSTATES))).toEqual([])
  })

  it('is what mapDatabaseError maps every custom state through, keeping the SQLSTATE and the cause (regression: TLM01, TLU01, TLC02 became DB_ERROR)', () => {
    fc.assert(
      fc.property(
        fc.constantFrom(...states),
        fc.string(),
        fc.option(fc.nat().map(String), { nil: undefined }),
        (state, message, detail) => {
          // given a driver error carrying one of turnlog's own SQLSTATEs
          const driverError = Object.assign(new Error(message), { code: state, ...(detail === undefined ? {} : { detail }) })
          // when it is mapped
          const mapped = mapDatabaseError(driverError)
          // then the code is the table's, the state is in details, the cause is the driver error
          expect(mapped.code).toBe(CUSTOM_SQLSTATES[state])
          expect(mapped.details['sqlState']).toBe(state)
          expect(mapped.cause).toBe(driverError)
          expect(customSqlState(driverError)).toBe(state)
        },
      ),
      { numRuns: 200 },
    )
  })

  it('recognises no other string as a custom state', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^TL[0-9A-Z]{3}$/)), (code) => {
        // given any code that is not a key of the table (a lookalike, a prototype property name, …)
        fc.pre(!Object.hasOwn(CUSTOM_SQLSTATES, code))
        // then it is not a custom state, and a lost id race is only the message_ids key's unique violation
        expect(customSqlState({ code })).toBeUndefined()
        expect(lostMessageIdRace({ code })).toBe(false)
      }),
      { numRuns: 300 },
    )
    expect(customSqlState({ code: 'constructor' })).toBeUndefined()
    expect(customSqlState({ code: 'toString' })).toBeUndefined()
  })

  it('is the table docs/errors.md shows, row for row', () => {
    // given the SQLSTATE table of docs/errors.md
    const doc = readFileSync(join(packagesDir, '..', 'docs', 'errors.md'), 'utf8')
    const rows = [...doc.matchAll(/^\| `(TL[0-9A-Z]{3})` \| `([A-Z_]+)` \|/gm)].map((m) => [m[1], m[2]])
    // then it lists each state once, with the code the table maps it to
    expect(rows).toEqual(Object.entries(CUSTOM_SQLSTATES))
  })
})
