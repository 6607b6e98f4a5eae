import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals'
import { TEST_ADMIN_URL_ENV } from '@turnlog/testing'
import { randomBytes } from 'node:crypto'
import pg from 'pg'
import { parseArgs } from '../src/parse-args.js'
import { recordScale } from '../src/record-scale.js'
import { rows } from '../src/record.js'

// The scale workload at a tiny size against the real server, so that it keeps running: the bulk load
// through importEvents (every generated line checked and every link recomputed by the store), both
// measurements, the sizes, and the database dropped afterwards.
let admin: pg.Client
const adminUrl = process.env[TEST_ADMIN_URL_ENV] ?? ''
const dbName = `turnlog_test_scale_${randomBytes(4).toString('hex')}`

beforeAll(async () => {
  jest.spyOn(console, 'error').mockImplementation(() => {}) // the workload's progress lines and rows
  admin = new pg.Client({ connectionString: adminUrl })
  await admin.connect()
})

afterAll(async () => {
  await admin.query(`drop database if exists ${dbName}_scale with (force)`)
  await admin.end()
})

describe('the scale workload', () => {
  it('grows a database through importEvents, measures at both sizes and drops it', async () => {
    const args = parseArgs([
      '--only',
      'scale',
      '--scale-messages',
      '1600',
      '--scale-sessions',
      '80',
      '--scale-base',
      '1000',
      '--database-url',
      adminUrl,
    ])
    const extraDatabases: string[] = []
    const outcome = await recordScale({ args, admin, dbName, extraDatabases, writers: 2 })

    // 32 templates of ≥ 20 messages, sessions up to the base size, then the rest up to 80 sessions
    expect(outcome.small.messages).toBeGreaterThanOrEqual(1000)
    expect(outcome.small.messages).toBeLessThan(1100)
    expect(outcome.large.messages).toBeGreaterThanOrEqual(1600)
    for (const point of [outcome.small, outcome.large]) {
      expect(point.append).toHaveLength(3)
      expect(point.retry).toHaveLength(3)
      expect(point.load.length).toBe(3 * point.loadFirstPass.length)
      // measured in a child process (the compiled one: build first), with the raw control beside each call
      expect(point.loadRaw).toHaveLength(point.load.length)
      expect(point.loadGc.over2WithScavenge).toBeLessThanOrEqual(point.loadGc.over2)
      expect(point.loadGc.over2).toBe(point.load.filter((ms) => ms > 2).length)
      expect(point.flushMs).toBeGreaterThan(0)
      const events = point.storage.tables.find((t) => t.table === 'events')
      expect(events?.rows).toBe(point.messages)
      expect(point.storage.tables.find((t) => t.table === 'message_ids')?.rows).toBe(point.messages)
      // pageinspect ships with the server's contrib package here: every index has a depth
      expect(point.storage.indexes.map((i) => i.depth)).not.toContain(null)
      expect(point.storage.indexes.map((i) => i.index)).toEqual(expect.arrayContaining(['events_pkey', 'message_ids_pkey']))
    }
    expect(outcome.importRates.length).toBeGreaterThan(0)
    expect(rows.map((r) => r.workload)).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/^scale: per-turn append/),
        expect.stringMatching(/^scale: bytes on disk per message/),
      ]),
    )
    const stored = await admin.query('select 1 from pg_database where datname = $1', [`${dbName}_scale`])
    expect(stored.rowCount).toBe(0)
    expect(extraDatabases).toEqual([`${dbName}_scale`])
  }, 600_000)
})
