import { expect } from '@jest/globals'
import { serializeMessage, toWire, toolPairing, type Message, type ToolPairing } from '@turnlog/core'

/** Content of the synthetic results the repair adds: no generated message has it. */
export const SYNTHETIC = 'synthetic result \u{1F9EA} 6f1c2b'

/**
 * The repair-pairing property's frame: reads the input's pairing, runs `toWire` with `repairPairing`
 * (synthetic results carry {@link SYNTHETIC}), hands the wire list and that pairing to `check`, and
 * then asserts the input is untouched (each message serializes as before).
 */
export function checkRepairedWire<W>(messages: readonly Message[], check: (wire: W[], pairing: ToolPairing) => void): void {
  const before = messages.map((m) => serializeMessage(m))
  const pairing = toolPairing(messages)
  const wire = toWire(messages, { repairPairing: true, interruptedContent: SYNTHETIC }) as W[]
  check(wire, pairing)
  expect(messages.map((m) => serializeMessage(m))).toEqual(before)
}
