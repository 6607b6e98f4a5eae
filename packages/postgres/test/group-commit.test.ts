/**
 * The group commit's scheduling on its own (no database: `runGroup` and `runAlone` are plain functions
 * recording what they were given). The database side is in group-commit.int.test.ts.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { isTurnlogError } from '@turnlog/core'
import { GroupCommit } from '@turnlog/postgres/internal'

interface Item {
  readonly sessionId: string
  readonly n: number
}

/** A deferred result the test settles by hand. */
function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void; reject: (e: unknown) => void } {
  let resolve!: (v: T) => void
  let reject!: (e: unknown) => void
  const promise = new Promise<T>((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

const tick = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

function recorder(options: { maxBatches?: number; maxInFlight?: number; rolledBack?: (e: unknown) => boolean } = {}) {
  const groups: { items: readonly Item[]; done: ReturnType<typeof deferred<readonly (string | null)[]>> }[] = []
  const alone: Item[] = []
  const concurrency = { now: 0, max: 0 }
  let aloneError: ((item: Item) => unknown) | null = null
  const gc = new GroupCommit<Item, string>({
    maxBatches: options.maxBatches ?? 8,
    maxInFlight: options.maxInFlight ?? 1,
    runGroup: (items) => {
      const done = deferred<readonly (string | null)[]>()
      groups.push({ items, done })
      return done.promise
    },
    runAlone: async (item) => {
      alone.push(item)
      concurrency.now++
      concurrency.max = Math.max(concurrency.max, concurrency.now)
      await tick()
      concurrency.now--
      const error = aloneError?.(item)
      if (error !== undefined && error !== null) throw error
      return `alone ${item.n}`
    },
    rolledBack: options.rolledBack ?? (() => true),
  })
  return { gc, groups, alone, concurrency, failAlone: (f: (item: Item) => unknown) => (aloneError = f) }
}

describe('GroupCommit', () => {
  it('sends a lone item alone, without a group statement', async () => {
    const { gc, groups, alone } = recorder()
    await expect(gc.submit({ sessionId: 'a', n: 1 })).resolves.toBe('alone 1')
    expect(groups).toHaveLength(0)
    expect(alone.map((i) => i.n)).toEqual([1])
  })

  it('groups items submitted in the same tick, up to maxBatches, and the rest once a slot frees', async () => {
    const { gc, groups } = recorder({ maxBatches: 3 })
    const results = [1, 2, 3, 4, 5].map((n) => gc.submit({ sessionId: `s${n}`, n }))
    await tick()
    expect(groups.map((g) => g.items.map((i) => i.n))).toEqual([[1, 2, 3]])
    groups[0]?.done.resolve(['r1', 'r2', 'r3'])
    await tick()
    expect(groups.map((g) => g.items.map((i) => i.n))).toEqual([
      [1, 2, 3],
      [4, 5],
    ])
    groups[1]?.done.resolve(['r4', 'r5'])
    await expect(Promise.all(results)).resolves.toEqual(['r1', 'r2', 'r3', 'r4', 'r5'])
  })

  it('keeps one batch per session in flight, in submission order', async () => {
    const { gc, groups } = recorder({ maxInFlight: 4 })
    const results = [
      gc.submit({ sessionId: 'a', n: 1 }),
      gc.submit({ sessionId: 'a', n: 2 }),
      gc.submit({ sessionId: 'b', n: 3 }),
      gc.submit({ sessionId: 'a', n: 4 }),
    ]
    await tick()
    expect(groups.map((g) => g.items.map((i) => i.n))).toEqual([[1, 3]])
    groups[0]?.done.resolve(['r1', 'r3'])
    await tick()
    await tick()
    // item 2 goes alone (its group has one item), item 4 still waits behind it
    await expect(results[1]).resolves.toBe('alone 2')
    await tick()
    await expect(results[3]).resolves.toBe('alone 4')
    expect(await results[0]).toBe('r1')
  })

  it('runs a batch the group left out (null) alone, with its own outcome', async () => {
    const { gc, groups, alone, failAlone } = recorder()
    failAlone((item) => (item.n === 2 ? new Error('conflict of 2') : null))
    const results = [1, 2, 3].map((n) =>
      gc.submit({ sessionId: `s${n}`, n }).then(
        (v) => v,
        (e: Error) => e.message,
      ),
    )
    await tick()
    groups[0]?.done.resolve(['r1', null, null])
    expect(await Promise.all(results)).toEqual(['r1', 'conflict of 2', 'alone 3'])
    expect(alone.map((i) => i.n)).toEqual([2, 3])
  })

  it('runs every batch alone when the group statement rolled back', async () => {
    const { gc, groups, alone, concurrency } = recorder({ rolledBack: () => true })
    const results = [1, 2, 3].map((n) => gc.submit({ sessionId: `s${n}`, n }))
    await tick()
    groups[0]?.done.reject(new Error('deadlock'))
    expect(await Promise.all(results)).toEqual(['alone 1', 'alone 2', 'alone 3'])
    expect(alone.map((i) => i.n)).toEqual([1, 2, 3])
    // one after another, in the group's slot: maxInFlight (1 here) still holds
    expect(concurrency.max).toBe(1)
  })

  it('reports an ambiguous failure (maybe committed) to every batch and retries none', async () => {
    const { gc, groups, alone } = recorder({ rolledBack: () => false })
    const results = [1, 2].map((n) =>
      gc.submit({ sessionId: `s${n}`, n }).then(
        () => 'resolved',
        (e: Error) => e.message,
      ),
    )
    await tick()
    groups[0]?.done.reject(new Error('connection lost'))
    expect(await Promise.all(results)).toEqual(['connection lost', 'connection lost'])
    expect(alone).toEqual([])
  })

  it('drain resolves once nothing is queued or in flight', async () => {
    const { gc, groups } = recorder()
    await gc.drain()
    const results = [1, 2].map((n) => gc.submit({ sessionId: `s${n}`, n }))
    let drained = false
    const draining = gc.drain().then(() => (drained = true))
    await tick()
    expect(drained).toBe(false)
    groups[0]?.done.resolve(['r1', 'r2'])
    await draining
    expect(await Promise.all(results)).toEqual(['r1', 'r2'])
  })

  it('keeps each group within maxWeight (its texts travel as one string), a heavy batch alone, order per session kept', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.record({ session: fc.constantFrom('a', 'b', 'c', 'd', 'e'), w: fc.integer({ min: 1, max: 120 }) }), {
          minLength: 1,
          maxLength: 30,
        }),
        async (items) => {
          // given: no statement ever returns, so every group the scheduler forms is visible at once
          const groups: Item[][] = []
          const weights = new Map<number, number>()
          const gc = new GroupCommit<Item, string>({
            maxBatches: 8,
            maxInFlight: 1_000,
            maxWeight: 100,
            weight: (item) => weights.get(item.n) ?? 0,
            runGroup: (group) => {
              groups.push([...group])
              return new Promise(() => {})
            },
            runAlone: (item) => {
              groups.push([item])
              return new Promise(() => {})
            },
            rolledBack: () => true,
          })
          // when: all submitted in one tick, the scheduler forms as many groups as slots and sessions allow
          items.forEach((it, n) => {
            weights.set(n, it.w)
            void gc.submit({ sessionId: it.session, n })
          })
          await tick()
          // then: every group of several batches weighs at most maxWeight; a session's first batch goes first
          for (const g of groups) if (g.length > 1) expect(g.reduce((sum, i) => sum + (weights.get(i.n) ?? 0), 0)).toBeLessThanOrEqual(100)
          const firsts = new Map<string, number>()
          items.forEach((it, n) => (firsts.has(it.session) ? undefined : firsts.set(it.session, n)))
          expect(
            groups
              .flat()
              .map((i) => i.n)
              .sort((a, b) => a - b),
          ).toEqual([...firsts.values()].sort((a, b) => a - b))
        },
      ),
      { numRuns: 200 },
    )
  })

  it('refuses limits that are not positive integers with INVALID_INPUT naming the option', () => {
    const base = { runGroup: async () => [], runAlone: async () => '', rolledBack: () => true }
    const fieldOf = (make: () => unknown): unknown => {
      try {
        make()
        return 'constructed'
      } catch (error) {
        return isTurnlogError(error, 'INVALID_INPUT') ? error.details['field'] : error
      }
    }
    expect(fieldOf(() => new GroupCommit({ ...base, maxBatches: 0, maxInFlight: 1 }))).toBe('options.maxBatches')
    expect(fieldOf(() => new GroupCommit({ ...base, maxBatches: 2, maxInFlight: 0.5 }))).toBe('options.maxInFlight')
  })
})
