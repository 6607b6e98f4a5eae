import { describe, expect, it } from '@jest/globals'
import {
  createMessage,
  isTurnlogError,
  messageFormatNames,
  parseFormatPayload,
  toolPairing,
  type Message,
  type MessageFormat,
} from '@turnlog/core'

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

/** The text of the "interrupted" results the shared tests ask for (the cases' expected results carry it). */
export const INTERRUPTED_CONTENT = 'interrupted'

/** The cases of the tests every item format (openai-responses, openai-agents) runs alike. */
export interface ItemFormatCases<P extends object> {
  /** The SDK-typed fixtures, by name: each is accepted verbatim. */
  readonly fixtures: Readonly<Record<string, object>>
  /** What is refused: `[what, payload, path of the first issue]`. */
  readonly refusals: readonly (readonly [string, unknown, string])[]
  /** The call/result pairs of the format and what pairs them (`callId`, `id`), as the test names say. */
  readonly pairs: readonly { readonly call: P; readonly result: P; readonly id: string }[]
  readonly pairedBy: string
  /** Items that open and answer nothing, and what they are (for the test name). */
  readonly opensNothing: { readonly what: string; readonly items: readonly object[] }
  /** `[call kind, call, its id, the SDK-typed interrupted result]`, what `interruptedResults` makes for each call. */
  readonly interrupted: readonly (readonly [string, P, string, unknown])[]
  /** A message item with a provider `id` (`msg_68a1`). */
  readonly withProviderId: object
}

/**
 * Declares, in the current `describe`, the tests both item formats run alike, over their own cases:
 * built in, fixtures accepted verbatim, refusals at their path, pairing, items that pair nothing,
 * interrupted results in the answering kind's own shape, and the provider id kept. Each format's test
 * file keeps its format's own tests.
 */
export function itemFormatTests<P extends object>(format: string, fmt: MessageFormat<P>, cases: ItemFormatCases<P>): void {
  const { msg, refusal, expectVerbatim, expectPair } = itemFormatChecks(format, fmt)

  it('is a built-in format', () => {
    expect(messageFormatNames()).toContain(format)
  })

  it.each(Object.entries(cases.fixtures))('accepts the SDK-typed fixture %s verbatim', (_name, item) => {
    expectVerbatim(item)
  })

  it.each(cases.refusals)('refuses %s with INVALID_MESSAGE at its path', (_what, payload, path) => {
    expect(refusal(payload).path).toBe(path)
  })

  it.each(cases.pairs.map((p) => [String(p.call['type' as keyof P]), p] as const))(
    `pairs %s with its result by ${cases.pairedBy}`,
    (_kind, pair) => {
      expectPair(pair)
    },
  )

  it(`${cases.opensNothing.what} open and answer nothing`, () => {
    for (const item of cases.opensNothing.items) {
      expect(fmt.toolCalls(item as P)).toEqual([])
      expect(fmt.toolResults(item as P)).toEqual([])
    }
  })

  describe('interrupted results', () => {
    it.each(cases.interrupted)(
      "answers a %s with the answering kind's own item, which the format's schema accepts",
      (_kind, call, id, result) => {
        // when
        const [made, ...rest] = fmt.interruptedResults([id], INTERRUPTED_CONTENT, call)

        // then
        expect(rest).toEqual([])
        expect(made).toEqual(result)
        expect(parseFormatPayload(made, format)).toEqual(result)
        expect(fmt.toolResults(made!)).toEqual([id])
      },
    )
  })

  it('keeps the item id verbatim: it is the provider id, not the message id', () => {
    const m = msg(cases.withProviderId)
    expect(m.payload).toHaveProperty('id', 'msg_68a1')
    expect(m.id).not.toBe('msg_68a1')
  })
}
