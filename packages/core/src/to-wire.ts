import { readingFormat } from './formats/format-registry.js'
import type { OpenAIChatWireMessage } from './formats/openai-chat-format.js'
import { isMessage, toMessage, type Message } from './message.js'
import { z } from 'zod'
import { checkKnownKeys } from './check-known-keys.js'
import { guardInput, parseInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'
import type { MessageId } from './ids.js'
import { reusedCallRenames, toolPairingOfDistinct, withoutIdenticalCopies, type PairingInput } from './tool-pairing.js'

/** Options for {@link toWire}. */
export interface ToWireOptions {
  /**
   * Make the copy acceptable to providers that reject unpaired tool calls: add a synthetic
   * "interrupted" result after each unanswered call's block, drop orphan results and extra results for
   * one call, open each call once (a call id opened again while its call is open is left out of the
   * copy), and send a call id called again after its earlier call was answered (ids numbered per
   * turn) under a new id, `<id>_<n>` for its n-th call, in the call and its results, for a format that
   * can rename (its `renameToolIds`; every built-in format that pairs calls can). Only the returned copy changes;
   * the log never does. A result after its call but outside the call's block (another message between
   * them) answers it and is not moved.
   */
  readonly repairPairing?: boolean
  /** Content of the synthetic result for an unanswered call. */
  readonly interruptedContent?: string
}

/**
 * A mutable OpenAI chat message as sent over the wire, assignable to the `openai` SDK's
 * `ChatCompletionMessageParam` (see {@link OpenAIChatWireMessage}).
 */
export type WireMessage = OpenAIChatWireMessage

/** Default content of a synthetic tool result added by `repairPairing`. */
export const INTERRUPTED_TOOL_RESULT = 'Tool call interrupted: no result was recorded.'

/**
 * The provider request body's `messages`: each payload's wire view by its format (a deep copy of the
 * payload for the built-ins), in order, with no turnlog field (ids, timestamps, status, flags, `meta`).
 * Ephemeral messages are included: they are sent, just never stored. Identical copies of one message
 * (same id, same content) are sent once, at the first one's place.
 *
 * Typed for the `openai` SDK: for `Message` (OpenAI chat payloads) the result is assignable to
 * `ChatCompletionMessageParam[]`; for `Message<P>` of your own format it is `P[]`.
 * @example
 * ```ts
 * const { messages } = await store.load(session)
 * const completion = await openai.chat.completions.create({ model: 'gpt-4.1', messages: toWire(messages) })
 * ```
 */
export function toWire(messages: readonly Message[], options?: ToWireOptions): WireMessage[]
export function toWire<P>(messages: readonly Message<P>[], options?: ToWireOptions): P[]
export function toWire(messages: readonly Message<unknown>[], options: ToWireOptions = {}): unknown[] {
  const checked = parseInput(ToWireOptionsSchema, options, 'options') as ToWireOptions
  checkKnownKeys(checked, TO_WIRE_OPTION_KEYS, 'options', 'toWire')
  if (!guardInput('messages', () => Array.isArray(messages)))
    throw new TurnlogError('INVALID_INPUT', 'toWire needs an array of messages', { details: { field: 'messages' } })
  // messages made by createMessage pass as they are; anything else is validated (a copy, a literal)
  return guardInput('toWire', () =>
    wire(
      (messages as readonly unknown[]).map((m) => (isMessage(m) ? m : toMessage(m))),
      checked,
    ),
  )
}

const ToWireOptionsSchema = z.looseObject({ repairPairing: z.boolean().optional(), interruptedContent: z.string().optional() })
const TO_WIRE_OPTION_KEYS = Object.keys(ToWireOptionsSchema.shape)

function wire(list: readonly Message<unknown>[], options: ToWireOptions): unknown[] {
  // identical copies of one message (a redelivery pushed twice) are sent once
  const messages = withoutIdenticalCopies(list)
  if (options.repairPairing !== true)
    return sendable(
      messages.map((m) => readingFormat(m.format).toWire(m.payload)),
      messages.map((m) => m.format),
    )
  // the repair names each message by its place, not its id: two contents under one id (an edit in
  // place next to its old copy) are two messages, each dropped or kept for what it carries
  const keyed: PairingInput[] = messages.map((m, i) => ({ id: String(i) as MessageId, payload: m.payload, format: m.format }))
  const pairing = toolPairingOfDistinct(keyed)
  // a call id called again after its call was answered: the later calls (and their results) renamed
  const renames = pairing.reusedCalls.length === 0 ? undefined : reusedCallRenames(keyed)
  // the results to drop, per message: orphans, and every result after the first for one call id
  const drop = new Map<string, Set<string>>()
  const dropResult = (messageId: string, toolCallId: string): void => {
    const set = drop.get(messageId)
    if (set) set.add(toolCallId)
    else drop.set(messageId, new Set([toolCallId]))
  }
  for (const o of pairing.orphans) dropResult(o.messageId, o.toolCallId)
  // messages that carry a second result for one call themselves (a format with several results per message)
  const repeating = new Set<string>()
  for (const d of pairing.duplicates) {
    const [first, ...later] = d.messageIds
    for (const id of later) {
      if (id === first) repeating.add(id)
      else dropResult(id, d.toolCallId)
    }
  }
  // call ids opened more than once: one opening is kept, every other one is left out of the copy
  const dropCalls = new Map<string, Set<string>>()
  const repeatingCalls = new Set<string>()
  const resultsAt = pairing.duplicateCalls.length === 0 ? undefined : resultPlaces(keyed)
  for (const d of pairing.duplicateCalls) {
    const kept = keptOpening(keyed, resultsAt as ReadonlyMap<string, readonly number[]>, d.toolCallId, d.messageIds)
    let keptTwice = false
    for (const id of d.messageIds) {
      if (id !== kept) {
        const set = dropCalls.get(id)
        if (set) set.add(d.toolCallId)
        else dropCalls.set(id, new Set([d.toolCallId]))
      } else if (keptTwice) repeatingCalls.add(id)
      else keptTwice = true
    }
  }
  const unansweredByMessage = new Map<string, string[]>()
  for (const u of pairing.unanswered) {
    const list = unansweredByMessage.get(u.messageId)
    if (list) list.push(u.toolCallId)
    else unansweredByMessage.set(u.messageId, [u.toolCallId])
  }
  const content = options.interruptedContent ?? INTERRUPTED_TOOL_RESULT
  const out: unknown[] = []
  // the format of each copy in `out`, for its wireRun
  const outFormats: string[] = []
  // unanswered calls waiting for the end of their block of results, with the format that opened them
  let pending: { format: string; ids: string[]; call: unknown }[] = []
  const flushPending = (): void => {
    for (const p of pending)
      for (const payload of readingFormat(p.format).interruptedResults(p.ids, content, p.call)) {
        out.push(readingFormat(p.format).toWire(payload))
        outFormats.push(p.format)
      }
    pending = []
  }
  for (const [i, m] of messages.entries()) {
    const key = String(i)
    const format = readingFormat(m.format)
    const results = format.toolResults(m.payload)
    const dropped = drop.get(key)
    let payload = m.payload
    let wired: unknown
    if ((dropped !== undefined || repeating.has(key)) && format.withoutResults !== undefined) {
      // a format that can drop single results sends the rest of the message (nothing left: not sent)
      wired = format.withoutResults(m.payload, dropped ?? new Set())
      if (wired === undefined) continue
    } else if (dropped !== undefined && results.every((id) => dropped.has(id))) {
      // a message whose every result is dropped (an orphan, a second result) is not sent
      continue
    }
    const callsDropped = dropCalls.get(key)
    if (callsDropped !== undefined || repeatingCalls.has(key)) {
      if (format.withoutCalls !== undefined) {
        // a format that can drop single calls sends the rest of the message (nothing left: not sent)
        wired = format.withoutCalls(wired ?? m.payload, callsDropped ?? new Set())
        if (wired === undefined) continue
      } else if (
        callsDropped !== undefined &&
        !opensKeptCall(format, m.payload, callsDropped) &&
        results.every((id) => dropped?.has(id) === true)
      ) {
        // a message that only repeats calls opened before (and carries no result kept) is not sent
        continue
      }
    }
    // synthetic results go right after the calling message's block of tool results (the results kept); a
    // message that opens calls ends the block even when it carries results of its own (a provider-executed
    // tool's call and result in one assistant message)
    if ((dropped === undefined ? results.length === 0 : results.every((id) => dropped.has(id))) || format.toolCalls(m.payload).length > 0)
      flushPending()
    let missing = unansweredByMessage.get(key)
    if (wired !== undefined) payload = wired
    const renamed = renames?.get(key as MessageId)
    if (renamed !== undefined && format.renameToolIds !== undefined) {
      wired = format.renameToolIds(payload, renamed)
      payload = wired
      if (missing) missing = missing.map((id) => renamed.get(id) ?? id)
    }
    outFormats.push(m.format)
    if (missing && format.answerInPlace !== undefined) {
      // a format whose messages carry their own results answers the calls in the message itself
      out.push(format.answerInPlace(payload, missing, content))
      continue
    }
    out.push(wired ?? format.toWire(payload))
    // the call as sent (renamed ids included), for a result that repeats something of it
    if (missing) pending.push({ format: m.format, ids: missing, call: renamed === undefined ? m.payload : payload })
  }
  flushPending()
  return sendable(out, outFormats)
}

/**
 * What is sent of the wire copies `copies` (`formats[i]` is the format of `copies[i]`): each maximal
 * run of one format's copies through that format's `wireRun` (a placeholder of encrypted reasoning
 * left out, …), the others as they are.
 */
function sendable(copies: unknown[], formats: readonly string[]): unknown[] {
  if (!formats.some((name, i) => (i === 0 || name !== formats[i - 1]) && readingFormat(name).wireRun !== undefined)) return copies
  const out: unknown[] = []
  for (let start = 0; start < copies.length;) {
    let end = start + 1
    while (end < copies.length && formats[end] === formats[start]) end++
    const run = copies.slice(start, end)
    const wireRun = readingFormat(formats[start]).wireRun
    for (const copy of wireRun === undefined ? run : wireRun(run)) out.push(copy)
    start = end
  }
  return out
}

/**
 * Where the results of each call id stand: the places (indexes in `messages`, ascending) of the
 * messages that carry a result for it. Made once per repair, so finding a call's first result is not a
 * walk over the list per call.
 */
function resultPlaces(messages: readonly PairingInput[]): Map<string, number[]> {
  const places = new Map<string, number[]>()
  messages.forEach((m, i) => {
    for (const id of readingFormat(m.format).toolResults(m.payload)) {
      const list = places.get(id)
      if (list === undefined) places.set(id, [i])
      else if (list[list.length - 1] !== i) list.push(i)
    }
  })
  return places
}

/**
 * Which message keeps the opening of a call id opened several times (`openers`, in order): the
 * message that carries the call's first result when it opens the call itself (a format whose part
 * opens and answers, such as an `ai-sdk-ui` tool part with its output), else the first opener.
 * `messages` are named by their place (`String(index)`, as `toWire`'s repair names them).
 */
function keptOpening(
  messages: readonly PairingInput[],
  resultsAt: ReadonlyMap<string, readonly number[]>,
  toolCallId: string,
  openers: readonly string[],
): string {
  const first = openers[0] as string
  const from = Number(first)
  // the first message from the first opener on that carries a result for the call
  const at = resultsAt.get(toolCallId)?.find((i) => i >= from)
  if (at === undefined) return first
  const m = messages[at] as PairingInput
  return openers.includes(m.id) && readingFormat(m.format).toolCalls(m.payload).includes(toolCallId) ? m.id : first
}

/** Whether `payload` opens a call whose opening is kept (one not in `dropped`). */
function opensKeptCall(format: ReturnType<typeof readingFormat>, payload: unknown, dropped: ReadonlySet<string> | undefined): boolean {
  return format.toolCalls(payload).some((id) => dropped?.has(id) !== true)
}
