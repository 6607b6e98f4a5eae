/**
 * Attacks "UUIDv7, monotonic within a process" (docs/guarantees.md, "Identity"; packages/core/README.md,
 * "Ids and UUID namespaces") with the clock behaviour the domain brief names (docs: "Wall-clock ordering:
 * clocks regress (NTP, sleep)"): a clock that jumps back, stands still for many ids, and jumps forward.
 * Every minted id (message, session, event: one counter) must sort after the one before it and never
 * repeat, and its embedded time must never go back.
 */
import { afterEach, describe, expect, it, jest } from '@jest/globals'
import { newEventId, newMessageId, newSessionId } from '@turnlog/core'

/** The 48-bit millisecond time of a UUIDv7. */
const timeOf = (id: string): number => parseInt(id.replace(/-/g, '').slice(0, 12), 16)

afterEach(() => {
  jest.restoreAllMocks()
})

describe('minted ids under a clock that regresses', () => {
  it('stay strictly increasing, unique and v7 when the clock jumps back a minute, stands still, then jumps forward', () => {
    // given: a clock script (ms): normal, back 60 s, frozen, back 1 ms, forward
    const start = Date.now()
    const script = [
      ...Array.from({ length: 500 }, (_, i) => start + Math.floor(i / 50)),
      ...Array.from({ length: 2000 }, () => start - 60_000),
      ...Array.from({ length: 500 }, () => start - 60_001),
      ...Array.from({ length: 500 }, (_, i) => start + 10 + i),
    ]
    let tick = 0
    jest.spyOn(Date, 'now').mockImplementation(() => script[Math.min(tick++, script.length - 1)] as number)
    const mint = [newMessageId, newSessionId, newEventId]

    // when
    const ids = script.map((_, i) => (mint[i % 3] as () => string)())

    // then
    for (let i = 1; i < ids.length; i++) {
      expect((ids[i - 1] as string) < (ids[i] as string)).toBe(true)
      expect(timeOf(ids[i] as string)).toBeGreaterThanOrEqual(timeOf(ids[i - 1] as string))
    }
    expect(new Set(ids).size).toBe(ids.length)
    for (const id of ids) expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    // the regressed clock never shows in an id: no id carries a time before the first one's
    expect(Math.min(...ids.map(timeOf))).toBe(timeOf(ids[0] as string))
  })
})
