/**
 * Attacks the cost of the wire view and the pairing check on lists a broken runtime produces: one
 * message id under thousands of contents (a runtime that re-creates a streaming reply under the same
 * id on every token: the edit-in-place incident #92881 at scale), and thousands of calls each opened
 * twice. Identical-copy detection compared every pair of contents of one id by canonical JSON text
 * (quadratic: 2,000 versions took 30 s in `toWire` here), and the repair searched the list again for
 * each call opened twice (10,000 such calls took 18 s). Both are linear now (≈ 0.3 s each here). No
 * figure is asserted (timing goals live in the bench): each case checks its output and runs under a test
 * timeout the linear cost is far below and the quadratic one was far above.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, newMessageId, toolPairing, toWire, type Message } from '@turnlog/core'

const call = (ids: readonly string[]): Message =>
  createMessage({
    role: 'assistant',
    content: null,
    tool_calls: ids.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
  })
const result = (id: string): Message => createMessage({ role: 'tool', tool_call_id: id, content: 'r' })

/**
 * The test timeout: ≈ 4× what each case took under a full jest run's load (1.1 s and 4.7 s, most of it
 * making the messages), below the quadratic repair's cost on an idle machine (30 s and 18 s).
 */
const TIMEOUT_MS = 20_000

describe('toWire and toolPairing on pathological lists', () => {
  it(
    'one id under 2,000 contents: each is sent once, in order, and the check is linear',
    () => {
      // given
      const id = newMessageId()
      const versions = Array.from({ length: 2000 }, (_, i) => createMessage({ role: 'user', content: `v${i}` }, { id }))
      const list = [...versions, ...versions.slice(0, 100)] // and identical copies of the first hundred

      // when
      const wire = toWire(list, { repairPairing: true })
      const pairing = toolPairing(list)

      // then
      expect(wire).toEqual(versions.map((m) => m.payload))
      expect(pairing.ok).toBe(true)
    },
    TIMEOUT_MS,
  )

  it(
    '10,000 calls each opened twice, answered at the end: each sent once, and the repair is linear',
    () => {
      // given
      const n = 10_000
      const ids = Array.from({ length: n }, (_, i) => `d${i}`)
      const list = [...ids.map((id) => call([id])), ...ids.map((id) => call([id])), ...ids.map(result)]

      // when
      const wire = toWire(list, { repairPairing: true })

      // then: the second openings are left out, every result kept
      expect(wire).toHaveLength(2 * n)
      expect(toolPairing(wire.map((p) => createMessage(p as never))).ok).toBe(true)
    },
    TIMEOUT_MS,
  )
})
