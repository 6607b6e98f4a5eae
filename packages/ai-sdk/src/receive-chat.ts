import {
  AI_SDK_UI_FORMAT,
  TurnlogError,
  createMessage,
  isTurnlogError,
  toWire,
  toolPairing,
  type JsonValue,
  type Message,
  type MessageId,
  type SessionId,
  type SessionStore,
} from '@turnlog/core'
import { checkOptions, optionKeys } from '@turnlog/core/internal'
import type { UIMessage } from 'ai'
import { chatScope, chatSessionId } from './chat-ids.js'
import { isEarlierReplyState } from './earlier-reply-state.js'
import { loadChatState, type ChatState } from './load-chat-state.js'
import { plainJson } from './plain-json.js'
import { sameJson as same } from './same-json.js'

/**
 * The body `useChat` posts, or the part of it this package reads. Either the client's whole list
 * (`DefaultChatTransport`'s default body: `{ id, messages, trigger, messageId }`) or only its last message
 * (a transport with `prepareSendMessagesRequest` returning `{ id, message, trigger, messageId }`, as the
 * AI SDK's persistence guide recommends).
 */
export type ChatRequest<UI extends UIMessage = UIMessage> =
  | { readonly messages: readonly UI[]; readonly trigger?: string; readonly messageId?: string }
  | { readonly message: UI; readonly trigger?: string; readonly messageId?: string }

/** Options for {@link receiveChat}. */
export interface ReceiveChatOptions<UI extends UIMessage = UIMessage> {
  /**
   * Checks the chat as it will be stored before anything is written, and returns it (typically
   * `(messages) => validateUIMessages({ messages, tools, metadataSchema, dataSchemas })`). A throw writes
   * nothing and is rethrown.
   */
  readonly validate?: (messages: UI[]) => Promise<UI[]> | UI[]
  /**
   * Roles a client may add as new messages, or give a stored message by editing it; default `['user']`.
   * A client adds user messages; replies come from the server (a new assistant or system message from the
   * client, or a stored message whose role the client changed to one of those, is refused with
   * `INVALID_INPUT`, `details.reason: 'role'`, nothing written).
   */
  readonly newRoles?: readonly UIMessage['role'][]
  /** Tenant of the session when this request creates it. */
  readonly tenantId?: string
  /** Metadata of the session when this request creates it. */
  readonly metadata?: JsonValue
}

/** Every option of {@link receiveChat}: a misspelt `validate` would store the chat unchecked. */
const RECEIVE_CHAT_OPTIONS = optionKeys<ReceiveChatOptions>({ validate: true, newRoles: true, tenantId: true, metadata: true })

/**
 * What {@link receiveChat} recorded, and the chat to answer.
 * @typeParam UI - the application's `UIMessage` type.
 */
export interface ChatTurn<UI extends UIMessage = UIMessage> {
  readonly chatId: string
  readonly sessionId: SessionId
  /** The session version after the write. */
  readonly version: number
  /** The chat as now stored (what the client holds): `originalMessages` of the reply stream. */
  readonly messages: UI[]
  /**
   * `messages` ready for the model: the tool calls an interrupted (partial) reply left without a result are
   * answered as `output-error` ("Tool call interrupted", turnlog's `toWire(…, { repairPairing: true })`), in
   * this copy only, so `convertToModelMessages(turn.forModel)` does not fail on them. The last message is
   * left as it is when it is a reply: the stream continues it (an approved call runs then). Equal to
   * `messages` when nothing was interrupted.
   */
  readonly forModel: UI[]
  /** `UIMessage.id` → turnlog id for every message of `messages`. */
  readonly ids: ReadonlyMap<string, MessageId>
  /** `UIMessage.id`s this request appended (the new user message). */
  readonly appended: readonly string[]
  /** `UIMessage.id`s whose content this request changed, each recorded as a revision (an edit, a tool approval or output). */
  readonly revised: readonly string[]
  /** `UIMessage.id`s this request retracted (after an edit, or a regenerated reply): kept in the history, out of the chat. */
  readonly retracted: readonly string[]
  /** True when nothing was written: the client re-posted what the store holds. */
  readonly duplicate: boolean
  /**
   * The stored reply to a request the chat already answered, which the client does not hold: set when
   * nothing was written (`duplicate`), the chat ends with a reply, and the client's request ends before a
   * reply (a one-message request re-posting the message the reply answers: a retry after a lost
   * response). The route sends it again (`replyChunks`) and runs no model, which would continue (revise)
   * it. `undefined` otherwise, also when the client posted the reply itself (it holds it: a whole-list
   * re-post, or the reply re-posted as the one message).
   */
  readonly answered: UI | undefined
  /**
   * True when the route should run no model: nothing was written (`duplicate`) and the chat ends with a
   * reply that owes nothing: a retried request whose response was lost, or a stale re-post of a reply the
   * server has continued since. Running the model would continue (revise) the stored reply and run its
   * tools again. False when the chat ends with a user message, with an interrupted (partial) reply (a
   * continuation that failed part-way: the model goes on from what was stored, results kept), or with a
   * reply holding a tool call the user answered (`approval-responded`) that no model run has acted on yet
   * (it must run, or the approval would wait for ever).
   */
  readonly settled: boolean
}

function invalid(message: string, details: Record<string, unknown>): TurnlogError {
  return new TurnlogError('INVALID_INPUT', message, { details })
}

function isUiMessage(value: unknown): value is UIMessage {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'string'
}

/**
 * The client's list for a request that sends one message: the stored chat up to that message (or with
 * it appended), so the rules for both request kinds are the rules of a whole list.
 */
function clientList<UI extends UIMessage>(
  stored: readonly UI[],
  request: { readonly message: UI; readonly trigger?: string | undefined },
): readonly UI[] {
  const message = request.message
  const at = stored.findIndex((m) => m.id === message.id)
  if (at === -1) return [...stored, message]
  // a re-post of a stored message (or of an earlier state of a stored reply: a retry whose response was
  // lost): nothing changes unless it asks to regenerate what followed it
  const held = stored[at] as UI
  if (request.trigger !== 'regenerate-message' && (same(held, message) || isEarlierReplyState(message, held))) return stored
  // an edit (useChat keeps the id and drops what followed), an approval or a regeneration
  return [...stored.slice(0, at), message]
}

/**
 * Records what a `useChat` request says about the chat, before the reply is generated, and returns the
 * chat to answer. The client's list (the whole list, or the stored chat up to the one message sent) becomes
 * the chat in one transaction (`store.sync` with the version just read):
 *
 * - a new trailing user message is appended, under `chatMessageId(chatId, message.id)`;
 * - a message the chat holds, re-posted unchanged, is a duplicate: nothing is written;
 * - a message the chat holds with other content (a user's edit, a tool approval or tool output the client
 *   added to the last reply) is recorded as a **revision** of that message (the old content stays in the
 *   history: `store.transcript`);
 * - stored messages the client no longer holds (those after an edited message, a reply being regenerated)
 *   are **retracted**: out of the chat, kept in the log with their content.
 *
 * Nothing is ever overwritten. The session is created on the first request for a chat id. A client list
 * that reorders stored messages, or lists a new message before a stored one, is refused (`INVALID_INPUT`,
 * `reason: 'reorder'`), so is one that lists a `UIMessage.id` twice (`reason: 'duplicate_id'`), a new
 * message of a role not in `newRoles`, or a stored message given such a role; a concurrent request that
 * wrote first makes this one fail with `VERSION_CONFLICT` (nothing written: answer 409, the client
 * retries). A key of `options` that is not an option is `INVALID_INPUT` (`details.field` naming it:
 * `options.validat`), nothing written; the request body is the client's and may hold other fields.
 */
export async function receiveChat<UI extends UIMessage = UIMessage>(
  store: SessionStore,
  chatId: string,
  request: ChatRequest<UI>,
  options: ReceiveChatOptions<UI> = {},
): Promise<ChatTurn<UI>> {
  const sessionId = chatSessionId(chatId)
  checkOptions(options, 'receiveChat options', RECEIVE_CHAT_OPTIONS)
  if (typeof request !== 'object' || request === null) throw invalid('the chat request must be an object', { field: 'request' })
  const many = 'messages' in request ? request.messages : undefined
  const one = 'message' in request ? request.message : undefined
  // Array.from: every slot, holes included (every() skips a sparse array's holes)
  if (many !== undefined ? !Array.isArray(many) || !Array.from(many as readonly unknown[]).every(isUiMessage) : !isUiMessage(one)) {
    throw invalid('the chat request needs `messages` (UIMessage[]) or `message` (a UIMessage)', { field: 'messages' })
  }
  const found = await loadOrEmpty<UI>(store, chatId)
  const state: ChatState<UI> = found ?? { chatId, sessionId, version: 0, messages: [], stored: [], ids: new Map(), interrupted: [] }
  let list: readonly UI[] = many ?? clientList(state.messages, { message: one as UI, trigger: request.trigger })
  if (options.validate !== undefined) list = await options.validate([...list])
  list = list.map(plainJson)
  // one message per id: the store keeps one copy of a repeated id, so the chat streamed from
  // `turn.messages` (and sent to the model) would differ from the one stored
  const seen = new Set<string>()
  for (const ui of list) {
    if (seen.has(ui.id)) {
      throw invalid(`chat ${chatId}: the client's list holds message ${ui.id} twice`, {
        chatId,
        uiMessageId: ui.id,
        reason: 'duplicate_id',
      })
    }
    seen.add(ui.id)
  }
  const newRoles = options.newRoles ?? ['user']
  const scope = chatScope(chatId)
  const byId = new Map(state.stored.map((m) => [m.id, m]))
  const records = list.map((ui) => {
    const known = state.ids.get(ui.id)
    if (known !== undefined) {
      const old = byId.get(known) as Message<UI>
      // an edit keeps the role: a client turning a stored message into one of a role it may not add (its
      // own user message into a system message) is refused as the new message would be
      if (old.payload.role !== ui.role && !newRoles.includes(ui.role)) {
        throw invalid(
          `chat ${chatId}: a client may not turn message ${ui.id} from ${old.payload.role} into ${ui.role}; allowed: ${newRoles.join(', ')}`,
          { chatId, uiMessageId: ui.id, role: ui.role, storedRole: old.payload.role, reason: 'role' },
        )
      }
      // the stored value keeps its status (a reply left partial stays partial when re-posted unchanged); an
      // earlier state of a stored reply (a retry that lost its response) is that reply, not an edit
      return same(old.payload, ui) || isEarlierReplyState(ui, old.payload)
        ? old
        : createMessage<UI, string>(ui, { format: AI_SDK_UI_FORMAT, id: known, ...status(old) })
    }
    if (!newRoles.includes(ui.role)) {
      throw invalid(
        `chat ${chatId}: a client may not add ${/^[aeiou]/.test(ui.role) ? 'an' : 'a'} ${ui.role} message (${ui.id}); allowed: ${newRoles.join(', ')}`,
        {
          chatId,
          uiMessageId: ui.id,
          role: ui.role,
          reason: 'role',
        },
      )
    }
    return createMessage<UI, string>(ui, { format: AI_SDK_UI_FORMAT, externalId: ui.id, scope })
  })
  // the chat's first request creates its session in the same transaction (when the store can), so a
  // refused request leaves no empty chat behind
  const write = async (target: SessionStore) => {
    if (found === null) await target.createSession({ id: sessionId, ...sessionOptions(options) })
    return target.sync(sessionId, records, { expectedVersion: state.version })
  }
  const result = store.atomically === undefined ? await write(store) : await store.atomically(write)
  // the chat as it now is: a stored reply the client re-posted in an earlier state stays what is stored
  list = list.map((ui, i) => {
    const record = records[i]
    return record !== undefined && byId.get(record.id) === record ? record.payload : ui
  })
  const uiOf = new Map<string, string>([
    ...state.stored.map((m) => [m.id, m.payload.id] as const),
    ...records.map((m) => [m.id, m.payload.id] as const),
  ])
  const names = (ids: readonly string[]) => ids.map((id) => uiOf.get(id) ?? id)
  const duplicate = result.version === state.version
  return {
    chatId,
    sessionId,
    version: result.version,
    messages: [...list],
    forModel: forModel(records),
    ids: new Map(records.map((m) => [m.payload.id, m.id])),
    appended: names(result.appended),
    revised: names(result.revised),
    retracted: names(result.retracted),
    duplicate,
    answered: duplicate && one !== undefined ? answeredReply(list, one.id) : undefined,
    settled: duplicate && records.at(-1)?.status !== 'partial' && owesNothing(list.at(-1)),
  }
}

/** A reply (not a user message) with no tool call the user answered that no model run acted on yet. */
function owesNothing(last: UIMessage | undefined): boolean {
  if (last?.role !== 'assistant') return false
  return !last.parts.some((p) => (p as { state?: unknown }).state === 'approval-responded')
}

/**
 * The reply that follows the client's one posted message in the chat (a duplicate: `list` is the
 * stored chat), when the chat ends with a reply; `undefined` when the posted message is that reply.
 */
function answeredReply<UI extends UIMessage>(list: readonly UI[], postedId: string): UI | undefined {
  const at = list.findIndex((m) => m.id === postedId)
  if (at === -1 || list.at(-1)?.role !== 'assistant') return undefined
  const next = list[at + 1]
  return next?.role === 'assistant' ? next : undefined
}

function sessionOptions(options: { readonly tenantId?: string; readonly metadata?: JsonValue }): {
  tenantId?: string
  metadata?: JsonValue
} {
  return {
    ...(options.tenantId === undefined ? {} : { tenantId: options.tenantId }),
    ...(options.metadata === undefined ? {} : { metadata: options.metadata }),
  }
}

/**
 * The payloads, an interrupted reply's open calls answered (all but a trailing reply, which the stream
 * continues), and each call sent once: a part still open beside the answered part of its call is left
 * out (`convertToModelMessages` would send the call twice, once without its result).
 */
function forModel<UI extends UIMessage>(records: readonly Message<UI>[]): UI[] {
  return records.map((m, i) => {
    const continued = i === records.length - 1 && m.payload.role === 'assistant'
    if (m.status === 'partial' && !continued) return (toWire([m], { repairPairing: true })[0] ?? toWire([m])[0]) as UI
    // with no open call of its own, the repair of one message only sends each of its calls once
    const own = toolPairing([m])
    return own.duplicateCalls.length > 0 && own.unanswered.length === 0
      ? ((toWire([m], { repairPairing: true })[0] ?? toWire([m])[0]) as UI)
      : (toWire([m])[0] as UI)
  })
}

function status(old: Message<unknown>): { status?: 'partial' } {
  return old.status === 'partial' ? { status: 'partial' } : {}
}

/** The chat as stored, or an empty chat (`null`: the session does not exist yet, nothing created). */
async function loadOrEmpty<UI extends UIMessage>(store: SessionStore, chatId: string): Promise<ChatState<UI> | null> {
  try {
    return await loadChatState<UI>(store, chatId)
  } catch (error) {
    if (!isTurnlogError(error, 'SESSION_NOT_FOUND')) throw error
    return null
  }
}
