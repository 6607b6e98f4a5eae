import { expect } from '@jest/globals'
import { createMessage, isTurnlogError, parseFormatPayload, toolPairing, type Message, type MessageFormat } from '@turnlog/core'

/**
 * The checks the item formats' unit tests (openai-responses, openai-agents) share, bound to one format:
 * each test keeps its own name and cases and calls these for the assertions both formats make alike.
 */
export interface ItemFormatChecks<P extends object> {
  /** A message of the format. */
  msg(payload: object): Message<unknown>
  /** The first issue of the `INVALID_MESSAGE` refusal of `payload` (throws if it is accepted). */
  refusal(payload: unknown): { path: string; message: string }
  /** `payload` validates and comes back verbatim (equal, and the same JSON text: key order kept). */
  expectVerbatim(payload: unknown): void
  /** `call` opens `id` and answers nothing, `result` answers `id` and opens nothing, and they pair. */
  expectPair(pair: { readonly call: P; readonly result: P; readonly id: string }): void
  /** The format's `toWire` of each fixture is a fresh, mutable deep copy equal to it. */
  expectFreshWireCopies(fixtures: Readonly<Record<string, object>>): void
}

/** The shared checks of the item format `format` (its registered name) whose format object is `fmt`. */
export function itemFormatChecks<P extends object>(format: string, fmt: MessageFormat<P>): ItemFormatChecks<P> {
  const msg = (payload: object): Message<unknown> => createMessage(payload, { format })
  return {
    msg,
    refusal(payload) {
      try {
        parseFormatPayload(payload, format)
      } catch (e) {
        if (!isTurnlogError(e, 'INVALID_MESSAGE')) throw e
        const issues = e.details['issues'] as { path: string[] }[]
        return { path: issues[0]?.path.join('.') ?? '', message: e.message }
      }
      throw new Error(`accepted ${JSON.stringify(payload)}`)
    },
    expectVerbatim(payload) {
      // when
      const parsed = parseFormatPayload(payload, format)

      // then
      expect(parsed).toEqual(payload)
      expect(JSON.stringify(parsed)).toBe(JSON.stringify(payload))
    },
    expectPair({ call, result, id }) {
      expect(fmt.toolCalls(call)).toEqual([id])
      expect(fmt.toolResults(call)).toEqual([])
      expect(fmt.toolResults(result)).toEqual([id])
      expect(fmt.toolCalls(result)).toEqual([])
      expect(toolPairing([msg(call), msg(result)]).ok).toBe(true)
    },
    expectFreshWireCopies(fixtures) {
      for (const item of Object.values(fixtures)) {
        // given
        const m = msg(item)

        // when
        const wire = fmt.toWire(m.payload as P) as Record<string, unknown>

        // then
        expect(wire).toEqual(item)
        expect(wire).not.toBe(m.payload)
        expect(Object.isFrozen(wire)).toBe(false)
        wire['mutated'] = true
        expect(m.payload).not.toHaveProperty('mutated')
      }
    },
  }
}
