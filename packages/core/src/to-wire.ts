import type { ChatMessage } from './chat-message.js'
import { cloneJson, type JsonValue } from './json-value.js'
import { isMessage, toMessage, type Message } from './message.js'
import { z } from 'zod'
import { guardInput, parseInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'
import { toolPairing, withoutIdenticalCopies } from './tool-pairing.js'

/** Options for {@link toWire}. */
export interface ToWireOptions {
  /**
   * Make the copy acceptable to providers that reject unpaired tool calls: add a synthetic
   * "interrupted" result after each unanswered call's block, drop orphan results and extra results for
   * one call id. Only the returned copy changes; the log never does.
   */
  readonly repairPairing?: boolean
  /** Content of the synthetic result for an unanswered call. */
  readonly interruptedContent?: string
}

/** A mutable provider message, as sent over the wire. */
export type WireMessage = { -readonly [K in keyof ChatMessage]: ChatMessage[K] }

/** Default content of a synthetic tool result added by `repairPairing`. */
export const INTERRUPTED_TOOL_RESULT = 'Tool call interrupted: no result was recorded.'

/**
 * The provider request body's `messages`: deep copies of the payloads, in order, with no turnlog field
 * (ids, timestamps, status, flags). Ephemeral messages are included: they are sent, just never stored.
 * Identical copies of one message (same id, same content) are sent once, at the first one's place.
 * @example
 * ```ts
 * const { messages } = await store.load(session)
 * const body = { model: 'gpt-4.1', messages: toWire(messages) } // no turnlog field reaches the provider
 * ```
 */
export function toWire(messages: readonly Message[], options: ToWireOptions = {}): WireMessage[] {
  const checked = parseInput(ToWireOptionsSchema, options, 'options') as ToWireOptions
  if (!guardInput('messages', () => Array.isArray(messages))) throw new TurnlogError('INVALID_INPUT', 'toWire needs an array of messages', { details: { field: 'messages' } })
  // messages made by createMessage pass as they are; anything else is validated (a copy, a literal)
  return guardInput('toWire', () => wire((messages as readonly unknown[]).map((m) => (isMessage(m) ? m : toMessage(m))), checked))
}

const ToWireOptionsSchema = z.object({ repairPairing: z.boolean().optional(), interruptedContent: z.string().optional() })

function wire(list: readonly Message[], options: ToWireOptions): WireMessage[] {
  // identical copies of one message (a redelivery pushed twice) are sent once
  const messages = withoutIdenticalCopies(list)
  if (options.repairPairing !== true) return messages.map((m) => cloneJson(m.payload as unknown as JsonValue) as WireMessage)
  const pairing = toolPairing(messages)
  const drop = new Set<string>(pairing.orphans.map((o) => o.messageId))
  for (const d of pairing.duplicates) for (const id of d.messageIds.slice(1)) drop.add(id)
  const unansweredByMessage = new Map<string, string[]>()
  for (const u of pairing.unanswered) {
    const list = unansweredByMessage.get(u.messageId)
    if (list) list.push(u.toolCallId)
    else unansweredByMessage.set(u.messageId, [u.toolCallId])
  }
  const content = options.interruptedContent ?? INTERRUPTED_TOOL_RESULT
  const out: WireMessage[] = []
  let pending: string[] = []
  const flushPending = (): void => {
    for (const id of pending) out.push({ role: 'tool', tool_call_id: id, content })
    pending = []
  }
  for (const m of messages) {
    if (drop.has(m.id)) continue
    // synthetic results go right after the assistant message's block of tool results
    if (m.payload.role !== 'tool') flushPending()
    out.push(cloneJson(m.payload as unknown as JsonValue) as WireMessage)
    const missing = unansweredByMessage.get(m.id)
    if (missing) pending.push(...missing)
  }
  flushPending()
  return out
}
