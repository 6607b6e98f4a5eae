import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { ERROR_CODES, isTurnlogError } from '@turnlog/core'
import { mapDatabaseError } from '@turnlog/postgres/internal'
import { openTestStore, thrownValueArb } from '@turnlog/testing'

describe('errors of the embedded store', () => {
  it('a streaming query through store.db is a TurnlogError INVALID_INPUT, not a plain Error (regression)', async () => {
    // given an embedded store and a kysely query streamed through its escape hatch
    const { store, close: closeStore } = await openTestStore('pglite')
    try {
      const rows = store.db.selectNoFrom((eb) => eb.val(1).as('one')).stream()
      // when it is iterated
      let caught: unknown
      try {
        for await (const row of rows) void row
      } catch (error) {
        caught = error
      }
      // then it is a coded TurnlogError that says what to do instead
      expect(isTurnlogError(caught, 'INVALID_INPUT')).toBe(true)
      expect((caught as Error).message).toMatch(/keyset/)
    } finally {
      await closeStore()
    }
  }, 60_000)

  it('mapDatabaseError turns any thrown value into a TurnlogError with a registered code', () => {
    fc.assert(
      fc.property(thrownValueArb(fc.record({ code: fc.string(), message: fc.string() })), (thrown) => {
        // when any value a driver (or anything else) can throw is mapped
        const mapped = mapDatabaseError(thrown)
        // then it is a TurnlogError with a code of the registry
        expect(isTurnlogError(mapped)).toBe(true)
        expect(mapped.code in ERROR_CODES).toBe(true)
      }),
      { numRuns: 300 },
    )
  })
})
