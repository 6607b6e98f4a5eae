import type { ChatMessage } from './chat-message.js'
import type { MessageId } from './ids.js'
import { canonicalJson, contentHash, sha256Hex } from './content-hash.js'
import { openAIChatFormat } from './formats/openai-chat-format.js'
import { readingFormat } from './formats/format-registry.js'
import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'

function checkPayload(payload: unknown, what: string): void {
  if (typeof payload !== 'object' || payload === null) {
    throw new TurnlogError('INVALID_INPUT', `${what} needs a provider payload object`, { details: { field: 'payload' } })
  }
}

/** A tool call with no result after it. */
export interface UnansweredToolCall {
  readonly messageId: MessageId
  readonly toolCallId: string
}
/** A tool result with no call before it. */
export interface OrphanToolResult {
  readonly messageId: MessageId
  readonly toolCallId: string
}
/** Several results for one call id. */
export interface DuplicateToolResults {
  readonly toolCallId: string
  readonly messageIds: readonly MessageId[]
}

/**
 * One tool call opened more than once: two calls with one id in one message, a later message that
 * calls the id again before any result answered it, or (`ai-sdk-ui`) a tool part still open beside
 * an answered part of the same call. `messageIds` lists every message that opens it, in order, a
 * message once per opening. (An id called again after a result answered it is a new call:
 * {@link ReusedToolCalls}.)
 */
export interface DuplicateToolCalls {
  readonly toolCallId: string
  readonly messageIds: readonly MessageId[]
}

/**
 * A call id called again after its earlier call was answered (a provider that numbers its calls per
 * turn, or a re-inserted transcript): each call pairs with the results that follow it, but providers
 * that need every id once in a request (Anthropic's `tool_use` ids) reject it until
 * `toWire(…, { repairPairing: true })` renames the later calls. `messageIds` lists the message that
 * opens each call of the id, in order.
 */
export interface ReusedToolCalls {
  readonly toolCallId: string
  readonly messageIds: readonly MessageId[]
}

/** Tool-call pairing state of a message list. Providers reject a request where any list is non-empty. */
export interface ToolPairing {
  readonly ok: boolean
  readonly unanswered: readonly UnansweredToolCall[]
  readonly orphans: readonly OrphanToolResult[]
  /** Several results for one call id. */
  readonly duplicates: readonly DuplicateToolResults[]
  /** A call id opened again while its call is open (the first opening is the one `unanswered` and results pair with). */
  readonly duplicateCalls: readonly DuplicateToolCalls[]
  /** A call id called again after its earlier call was answered: a new call under the same id. */
  readonly reusedCalls: readonly ReusedToolCalls[]
}

/** The ids of an assistant message's tool calls (`id`, or `call_id` where a provider uses it). */
export function toolCallIds(payload: ChatMessage): string[] {
  checkPayload(payload, 'toolCallIds')
  return guardInput('payload', () => callIds(payload))
}

function callIds(payload: ChatMessage): string[] {
  return [...openAIChatFormat.toolCalls(payload)]
}

/** The call id a tool result answers (`tool_call_id`, or `call_id`), or undefined. */
export function toolResultId(payload: ChatMessage): string | undefined {
  checkPayload(payload, 'toolResultId')
  return guardInput('payload', () => resultId(payload))
}

function resultId(payload: ChatMessage): string | undefined {
  return openAIChatFormat.toolResults(payload)[0]
}

/**
 * The list without later identical copies of a message (same id, same content hash): copies are one
 * message (docs/guarantees.md). Copies with other content under the same id are kept (a conflict the
 * store refuses). Returns `list` itself when it has no copies. Linear in the list: each message is
 * hashed once (its memoised hash, and the hash of its canonical text only when an id repeats with a
 * memoised hash not seen before), never compared with every other content of its id.
 */
export function withoutIdenticalCopies<M extends { readonly id: string; readonly payload: unknown }>(list: readonly M[]): readonly M[] {
  // the usual list (a load, a prompt) has no id twice: one set of ids says so without an entry per message
  const ids = new Set<string>()
  for (const m of list) ids.add(m.id)
  if (ids.size === list.length) return list
  const seen = new Map<string, ContentsSeen<M>>()
  let copies = false
  const out: M[] = []
  for (const m of list) {
    const same = seen.get(m.id)
    if (same === undefined) {
      seen.set(m.id, { kept: [m], hashes: new Set([memoisedHash(m.payload)]), texts: undefined })
      out.push(m)
    } else if (isCopy(same, m)) {
      copies = true
    } else {
      same.kept.push(m)
      out.push(m)
    }
  }
  return copies ? out : list
}

/** The contents kept under one id: the messages, their content hashes and the hashes of their texts. */
interface ContentsSeen<M> {
  readonly kept: M[]
  readonly hashes: Set<string>
  /** Hashes of the kept contents' canonical texts, made when first needed. */
  texts: Set<string> | undefined
}

/**
 * Whether `m` has the content of a message kept under its id: the same content hash, or (when the
 * hashes differ) the same canonical text: a redacted message as a store loads it carries the original's
 * content hash (primed), a copy of it its placeholder's own. Records `m`'s hashes when it is not.
 */
function isCopy<M extends { readonly payload: unknown }>(same: ContentsSeen<M>, m: M): boolean {
  const hash = memoisedHash(m.payload)
  if (same.hashes.has(hash)) return true
  same.texts ??= new Set(same.kept.map((k) => textHash(k.payload)))
  const text = textHash(m.payload)
  if (same.texts.has(text)) return true
  same.hashes.add(hash)
  same.texts.add(text)
  return false
}

/** The content hash of a payload as `contentHash` gives it (memoised, or primed by a store). */
function memoisedHash(payload: unknown): string {
  return contentHash({ payload })
}

/** The hash of a payload's canonical text, computed (never a memoised or primed hash). */
function textHash(payload: unknown): string {
  return sha256Hex(canonicalJson(payload))
}

/** What pairing reads of a message: its id, payload and format (absent: `openai-chat`). */
export interface PairingInput {
  readonly id: MessageId
  readonly payload: unknown
  readonly format?: string
}

/**
 * Checks tool-call pairing over a list in order, each message read by its format (which calls it
 * opens, which results it carries): every call needs exactly one result after it; a result before (or
 * without) its call is an orphan; an id opened again while its call is open (in the same message or a
 * later one) is a duplicate call; an id called again in a message after one that answered it is a new
 * call (reported in `reusedCalls`), which the results after it answer. Identical copies of a message
 * count once. Calls and results pair by id across formats; a format with no pairing (`json`) opens
 * and answers nothing.
 */
export function toolPairing(messages: readonly PairingInput[]): ToolPairing {
  if (!guardInput('messages', () => Array.isArray(messages)))
    throw new TurnlogError('INVALID_INPUT', 'toolPairing needs an array of messages', { details: { field: 'messages' } })
  return guardInput('messages', () => {
    for (const m of messages) {
      if (typeof m !== 'object' || m === null || typeof m.payload !== 'object' || m.payload === null) {
        throw new TurnlogError('INVALID_INPUT', 'toolPairing needs messages with a payload object', { details: { field: 'messages' } })
      }
    }
    // identical copies of one message (a redelivery pushed twice) are that one message, not a second result
    return pairing(withoutIdenticalCopies(messages))
  })
}

/**
 * {@link toolPairing} of a list a store read, whose ids are distinct (one row per message id: the
 * projection's primary key, or the log of a session of appends only, where an id is appended once):
 * no copies to drop, so the set of ids that looks for them (a hash of every id string) is not built.
 * Internal (`@turnlog/core/internal`): a caller's list goes through {@link toolPairing}.
 */
export function toolPairingOfDistinct(messages: readonly PairingInput[]): ToolPairing {
  return guardInput('messages', () => pairing(messages))
}

/**
 * One opening of a call id and what answers it: a call id is opened again as a new call (its
 * `scope` counted from 1) once an earlier message has answered it; opened again while still open,
 * it is a duplicate call of the same one.
 */
interface CallScope {
  readonly toolCallId: string
  /** 1 for the id's first call, 2 for its first reuse, … */
  readonly scope: number
  /** Every message that opens this call, in order (a message once per opening). */
  readonly openers: MessageId[]
  /** Every message that carries a result for this call, in order. */
  readonly results: MessageId[]
}

/** The calls of a list, in the order they were first opened, and the orphan results. */
interface PairingWalk {
  readonly scopes: readonly CallScope[]
  readonly orphans: readonly OrphanToolResult[]
}

function walk(messages: readonly PairingInput[]): PairingWalk {
  // the current call of each id (the latest opening)
  const current = new Map<string, CallScope>()
  const scopes: CallScope[] = []
  const orphans: OrphanToolResult[] = []
  for (const m of messages) {
    const format = readingFormat(m.format)
    for (const id of format.toolCalls(m.payload)) {
      const open = current.get(id)
      // answered by an earlier message of its own (not one that carries the call and its result
      // together, such as an answered UI tool part, which a later part only repeats): a new call
      if (open === undefined || (open.results.length > 0 && !open.openers.includes(open.results[0] as MessageId))) {
        const scope: CallScope = { toolCallId: id, scope: open === undefined ? 1 : open.scope + 1, openers: [m.id], results: [] }
        current.set(id, scope)
        scopes.push(scope)
      } else open.openers.push(m.id)
    }
    for (const answered of format.toolResults(m.payload)) {
      const open = current.get(answered)
      if (open === undefined) orphans.push({ messageId: m.id, toolCallId: answered })
      else open.results.push(m.id)
    }
  }
  return { scopes, orphans }
}

function pairing(messages: readonly PairingInput[]): ToolPairing {
  const { scopes, orphans } = walk(messages)
  const unanswered: UnansweredToolCall[] = []
  const duplicates: DuplicateToolResults[] = []
  const duplicateCalls: DuplicateToolCalls[] = []
  const firstOpener = new Map<string, MessageId>()
  const reused = new Map<string, MessageId[]>()
  for (const s of scopes) {
    const opener = s.openers[0] as MessageId
    if (s.results.length === 0) unanswered.push({ messageId: opener, toolCallId: s.toolCallId })
    else if (s.results.length > 1) duplicates.push({ toolCallId: s.toolCallId, messageIds: s.results })
    if (s.openers.length > 1) duplicateCalls.push({ toolCallId: s.toolCallId, messageIds: s.openers })
    if (s.scope === 1) firstOpener.set(s.toolCallId, opener)
    else {
      const list = reused.get(s.toolCallId)
      if (list) list.push(opener)
      else reused.set(s.toolCallId, [firstOpener.get(s.toolCallId) as MessageId, opener])
    }
  }
  const reusedCalls: ReusedToolCalls[] = []
  for (const [toolCallId, messageIds] of reused) reusedCalls.push({ toolCallId, messageIds })
  return {
    ok:
      unanswered.length === 0 && orphans.length === 0 && duplicates.length === 0 && duplicateCalls.length === 0 && reusedCalls.length === 0,
    unanswered,
    orphans,
    duplicates,
    duplicateCalls,
    reusedCalls,
  }
}

/**
 * The new id of each reused call id, per message, for the wire copy of a list: the n-th call of an
 * id (n ≥ 2) is sent as `<id>_<n>` (more `_` until it is an id the list does not use), in the
 * message that opens it and in each that answers it. Empty when no id is reused.
 * Not exported from the package: `toWire` is its caller.
 */
export function reusedCallRenames(messages: readonly PairingInput[]): ReadonlyMap<MessageId, ReadonlyMap<string, string>> {
  const { scopes } = walk(messages)
  const renames = new Map<MessageId, Map<string, string>>()
  if (!scopes.some((s) => s.scope > 1)) return renames
  const used = new Set(scopes.map((s) => s.toolCallId))
  for (const s of scopes) {
    if (s.scope === 1) continue
    let id = `${s.toolCallId}_${s.scope}`
    while (used.has(id)) id += '_'
    used.add(id)
    for (const m of [...s.openers, ...s.results]) {
      const map = renames.get(m)
      if (map) map.set(s.toolCallId, id)
      else renames.set(m, new Map([[s.toolCallId, id]]))
    }
  }
  return renames
}
