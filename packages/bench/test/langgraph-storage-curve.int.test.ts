import { afterAll, describe, expect, it } from '@jest/globals'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { crossingLength, measureStoragePoint, type StoragePoint } from '../src/langgraph-storage-curve.js'
import { langGraphText } from '../src/langgraph-text.js'

// The langgraph-storage workload's curve: both savers really written to and compacted, at two
// thread lengths; the stock saver's bytes per message grow with the thread, turnlog's do not.
const databases: TestDatabase[] = []

afterAll(async () => {
  for (const db of databases) await db.drop()
})

const point = (steps: number, turnlog: number, stock: number): StoragePoint => ({
  steps,
  threads: 1,
  turnlog,
  stock,
  turnlogTables: '',
  stockTables: '',
})

describe('the langgraph storage curve', () => {
  it('measures the stock saver growing with the thread and turnlog staying flat', async () => {
    const text = langGraphText('prose')
    const measured: StoragePoint[] = []
    for (const steps of [10, 40]) {
      const [ours, peer] = [await createTestDatabase(), await createTestDatabase()]
      databases.push(ours, peer)
      measured.push(await measureStoragePoint(ours.connectionString, peer.connectionString, text, 8, steps))
    }
    const [short, long] = measured as [StoragePoint, StoragePoint]
    expect([short.steps, long.steps, short.threads]).toEqual([10, 40, 8])
    // the whole list at every step: ≈ steps / 2 messages per message (a short list's blob, under
    // TOAST's 2 KB threshold, is not compressed, so the growth is less than fourfold)
    expect(long.stock).toBeGreaterThan(1.5 * short.stock)
    // a table's first pages are shared by fewer messages in short threads: turnlog's do not grow
    expect(long.turnlog).toBeLessThanOrEqual(short.turnlog)
    expect(long.turnlog).toBeGreaterThan(500)
    expect(long.turnlog).toBeLessThan(long.stock)
    expect(long.turnlogTables).toMatch(/turnlog\.events \d+/)
    expect(long.turnlogTables).toMatch(/lg\.checkpoints \d+/)
    expect(long.stockTables).toMatch(/checkpoint_blobs \d+/)
  }, 240_000)

  it('interpolates the length where the ratio crosses the goal, or says it is not crossed', () => {
    const points = [point(100, 2000, 16_000), point(25, 2000, 5_000), point(200, 2000, 32_000)]
    // turnlog 2,000 = 0.1 × the stock saver's 16,000 + 160 per step beyond 100: at 125 steps
    expect(crossingLength(points, 0.1)).toBeCloseTo(125, 6)
    expect(crossingLength(points, 0.4)).toBe(25)
    expect(crossingLength(points, 0.01)).toBeNull()
    expect(crossingLength(points, 0.5)).toBeNull()
    expect(crossingLength([], 0.1)).toBeNull()
  })
})
