import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createTestDatabase, weirdStringArb, type TestDatabase } from '@turnlog/testing'
import fc from 'fast-check'
import { Readable } from 'node:stream'
import { pipeline } from 'node:stream/promises'
import pg from 'pg'
import { from as copyFrom } from 'pg-copy-streams'
import { byteaHex, copyField, copyRow } from '../src/copy-text.js'

// The import workload's raw baseline writes COPY text rows; a wrong escape would make it load other
// data (or fail) and skew the ratio. Round trip through a real COPY.
let db: TestDatabase
let client: pg.Client

beforeAll(async () => {
  db = await createTestDatabase()
  client = new pg.Client({ connectionString: db.connectionString })
  await client.connect()
  await client.query('create table t (n int primary key, s text, j json, b bytea)')
})

afterAll(async () => {
  await client.end()
  await db.drop()
})

/** Text Postgres can hold: no NUL, no lone surrogate. */
const textArb = fc
  .string({
    unit: fc.oneof(fc.constantFrom('\\', '\t', '\n', '\r', '\\N', 'N', '"', ' ', 'é', '😀'), fc.string({ unit: 'grapheme', maxLength: 3 })),
  })
  .filter((s) => !s.includes('\u0000'))

describe('COPY text encoding', () => {
  it('null is \\N and a literal backslash-N is not', () => {
    expect(copyField(null)).toBe('\\N')
    expect(copyField('\\N')).toBe('\\\\N')
    expect(copyRow(['a\tb', null])).toBe('a\\tb\t\\N\n')
  })

  it('any text, any JSON text (NUL and lone surrogates escaped by JSON.stringify) and bytea come back as written', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.tuple(fc.option(textArb), weirdStringArb, fc.uint8Array({ maxLength: 8 })), { maxLength: 20 }),
        async (rows) => {
          await client.query('truncate t')
          const lines = rows.map(([s, w, b], n) => copyRow([String(n), s, JSON.stringify({ w }), byteaHex(Buffer.from(b).toString('hex'))]))
          await pipeline(Readable.from([lines.join('')]), client.query(copyFrom('copy t (n, s, j, b) from stdin')))
          const { rows: back } = await client.query<{ s: string | null; j: string; b: Buffer }>(
            'select s, j::text as j, b from t order by n',
          )
          expect(back.map((r) => [r.s, r.j, Buffer.from(r.b).toString('hex')])).toEqual(
            rows.map(([s, w, b]) => [s, JSON.stringify({ w }), Buffer.from(b).toString('hex')]),
          )
        },
      ),
      { numRuns: 100 },
    )
  })
})
