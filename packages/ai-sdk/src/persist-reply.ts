import {
  AI_SDK_UI_FORMAT,
  TurnlogError,
  createMessage,
  isTurnlogError,
  type AppendResult,
  type Message,
  type MessageId,
  type SessionStore,
} from '@turnlog/core'
import type { FinishReason, UIMessage } from 'ai'
import { chatMessageId, chatScope } from './chat-ids.js'
import { generateMessageId } from './generate-message-id.js'
import { plainJson } from './plain-json.js'
import type { ChatTurn } from './receive-chat.js'

/** The part of the AI SDK's `onStepFinish` event (`createUIMessageStream`) a reply write reads. */
export interface ReplyStepEvent<UI extends UIMessage = UIMessage> {
  readonly responseMessage: UI
  readonly isContinuation: boolean
}

/** The part of the AI SDK's `onFinish` event (`toUIMessageStreamResponse`, `createUIMessageStream`) a reply write reads. */
export interface ReplyFinishEvent<UI extends UIMessage = UIMessage> extends ReplyStepEvent<UI> {
  readonly isAborted: boolean
  readonly finishReason?: FinishReason
}

/** What happened to one reply, once its stream ended. */
export interface ReplyResult {
  /** The reply's `UIMessage.id` (a continuation: the id of the message it continued). */
  readonly uiMessageId: string
  /** Its turnlog id. */
  readonly messageId: MessageId
  /**
   * `'partial'` when the stream did not end normally (aborted, or cancelled by a client that went away: no
   * finish reason): the message holds what was streamed and stays flagged partial.
   */
  readonly status: 'partial' | 'final'
  /** Writes made for this reply: 1 append (or none for a continuation), at most 1 revision per step, 1 at the end. */
  readonly writes: number
  readonly finishReason?: FinishReason
}

/**
 * The callbacks that store a streamed reply. Pass them to the AI SDK as they are:
 * `createUIMessageStream({ originalMessages: turn.messages, generateId, onStepFinish, onFinish, … })`, or,
 * writing the reply once at its end only, `toUIMessageStreamResponse({ originalMessages: turn.messages,
 * generateMessageId, onFinish })`.
 */
export interface ReplyPersistence<UI extends UIMessage = UIMessage> {
  /** Mints the reply's id (see the `generateMessageId` export). */
  readonly generateMessageId: () => string
  /** The same function, under the name `createUIMessageStream` takes. */
  readonly generateId: () => string
  /** At the end of each step: appends the reply as a partial message (first step) or revises it (later steps). */
  readonly onStepFinish: (event: ReplyStepEvent<UI>) => Promise<void>
  /** At the end of the stream: finalizes the reply, or, when the stream was aborted, leaves it partial with what was streamed. */
  readonly onFinish: (event: ReplyFinishEvent<UI>) => Promise<void>
  /**
   * Settles when the stream ended and its last write is done: the reply's {@link ReplyResult}, or the first
   * write error. The AI SDK reports an error thrown by `onStepFinish` to the stream's `onError` and
   * carries on; this promise does not lose it (a later write that succeeded heals the content, but `done`
   * still rejects with the failure). Await it (or `.catch` it) to see write failures.
   */
  readonly done: Promise<ReplyResult>
}

/** Attempts of a reply's append while other requests keep moving the chat (each reads the chat again). */
const APPEND_ATTEMPTS = 5

/**
 * Builds the callbacks that persist the assistant reply to `turn` (from `receiveChat`). The reply is
 * appended as a **partial** message at the end of its first step, revised **at most once per step**, and
 * finalized when the stream ends; a stream that did not finish (aborted, or cancelled when the client went
 * away: the AI SDK then calls `onFinish` without a finish reason) leaves it **partial** (flagged: `load` reports
 * `status: 'partial'`, `loadChatState` lists it in `interrupted`) with what was streamed. A continuation
 * (the AI SDK's `isContinuation`: the stream extends the chat's last assistant message, after a tool
 * approval or a client-side tool output) revises that message instead of adding one.
 *
 * Why once per step and not once per token: a revision stores a full copy of the message (the log keeps
 * every version, hashed and chained), so revising per token would store a reply of n tokens about n times
 * over (quadratic). Steps end where tool calls and results land, which is where a crash would otherwise
 * lose the most; within a step the client holds the tokens, and a crash mid-step leaves the previous
 * step's content, partial.
 *
 * Writes run one at a time, in event order. A write fails loudly: `done` rejects, and when the last write
 * fails `onFinish` throws too (the AI SDK then errors the stream), so a lost reply is never silent. A
 * later write that succeeds stores the whole reply, with its status, also after a first append whose
 * outcome is unknown (it may have committed, its acknowledgement lost): that write revises the message,
 * and appends it only when it is not stored. A reply whose question another request dropped before the
 * reply's first write (a whole-list request from a tab that does not hold the question, an edit of an
 * earlier message) is not appended: that write fails with `UNKNOWN_MESSAGE` (`details.answers` naming the
 * question), as any write of a reply the chat dropped does.
 */
export function persistReply<UI extends UIMessage = UIMessage>(store: SessionStore, turn: ChatTurn<UI>): ReplyPersistence<UI> {
  let queue: Promise<unknown> = Promise.resolve()
  let written: MessageId | undefined
  let appendFailed = false
  let writes = 0
  let failure: unknown
  let finished = false
  let settle!: { resolve: (r: ReplyResult) => void; reject: (e: unknown) => void }
  const done = new Promise<ReplyResult>((resolve, reject) => (settle = { resolve, reject }))
  done.catch(() => undefined) // observed through `done` by the caller; never an unhandled rejection

  const idOf = (ui: UI, isContinuation: boolean): MessageId =>
    (isContinuation ? turn.ids.get(ui.id) : undefined) ?? written ?? chatMessageId(turn.chatId, ui.id)

  async function write(streamed: UI, isContinuation: boolean, status: 'partial' | 'final'): Promise<MessageId> {
    const ui = plainJson(streamed)
    const id = idOf(ui, isContinuation)
    if (written === undefined && !isContinuation) {
      const message = createMessage<UI, string>(ui, {
        format: AI_SDK_UI_FORMAT,
        externalId: ui.id,
        scope: chatScope(turn.chatId),
        ...(status === 'partial' ? { status } : {}),
      })
      if (appendFailed) {
        await writeAfterFailedAppend(message, ui, status)
      } else {
        try {
          await appendReply(message)
        } catch (error) {
          appendFailed = true
          throw error
        }
      }
    } else {
      await store.revise(turn.sessionId, id, ui, { status })
    }
    written = id
    writes++
    return id
  }

  /**
   * The reply's write after its append failed. That append may have committed (its acknowledgement lost):
   * then the message is stored with an earlier step's content and status, and appending it again would be
   * a duplicate (same content: the status, not part of the content hash, would stay partial) or a
   * `MESSAGE_CONFLICT` (other content, recorded as conflict evidence for the audit). So the message is
   * revised first, with this write's content and status (a revision, a finalization, or nothing when it
   * is stored as it is: idempotent on retry), and appended only when it is not live.
   */
  async function writeAfterFailedAppend(message: Message<UI>, ui: UI, status: 'partial' | 'final'): Promise<void> {
    let notLive: unknown
    try {
      await store.revise(turn.sessionId, message.id, ui, { status })
      return
    } catch (error) {
      if (!isTurnlogError(error, 'UNKNOWN_MESSAGE')) throw error
      notLive = error
    }
    const { appended } = await appendReply(message)
    // stored but not live: the failed append did commit, and the reply was retracted since (a whole-list
    // request from a client that does not hold it); the reply's write fails as any later one would
    if (!appended.includes(message.id)) throw notLive
  }

  /**
   * The reply's append, after the message it answers (the turn's last message). The chat may have moved
   * since `receiveChat` (another tab's request): the append is made at the version the turn left, and
   * when another write came first, only while that message is still live. A request that dropped it (a
   * whole-list request from a tab that does not hold it, an edit of an earlier message) dropped the reply
   * with it: the reply is not appended, and the write fails with the `UNKNOWN_MESSAGE` any later write of
   * a dropped reply gets. A request that kept it (the one-message shape appends after what the chat
   * holds) leaves the reply to be appended after that request's messages.
   */
  async function appendReply(message: Message<UI>): Promise<AppendResult> {
    const question = turn.messages.at(-1)
    const questionId = question === undefined ? undefined : turn.ids.get(question.id)
    let expectedVersion = turn.version
    for (let attempt = 1; ; attempt++) {
      try {
        return await store.append(turn.sessionId, [message], { expectedVersion })
      } catch (error) {
        if (!isTurnlogError(error, 'VERSION_CONFLICT') || attempt >= APPEND_ATTEMPTS) throw error
      }
      const { version, messages } = await store.load(turn.sessionId)
      if (questionId !== undefined && !messages.some((m) => m.id === questionId)) {
        throw new TurnlogError(
          'UNKNOWN_MESSAGE',
          `chat ${turn.chatId}: reply ${message.payload.id} answers message ${question?.id ?? ''}, which another request dropped from the chat; the reply is not stored`,
          {
            details: {
              chatId: turn.chatId,
              uiMessageId: message.payload.id,
              answers: question?.id,
              messageId: questionId,
              reason: 'not_live',
            },
          },
        )
      }
      expectedVersion = version
    }
  }

  function enqueue<T>(job: () => Promise<T>): Promise<T> {
    const next = queue.then(job)
    queue = next.catch((error: unknown) => {
      failure ??= error
    })
    return next
  }

  return {
    generateMessageId,
    generateId: generateMessageId,
    // a step reported after the end (the AI SDK ends a cancelled stream first) must not make the reply partial again
    onStepFinish: (event) =>
      finished ? Promise.resolve() : enqueue(() => write(event.responseMessage, event.isContinuation, 'partial').then(() => undefined)),
    onFinish: async (event) => {
      if (finished) return
      finished = true
      const ui = event.responseMessage
      // no finish reason: the stream did not reach its end (the client went away and the AI SDK cancelled
      // the stream, which reports `isAborted: false`), so the reply is incomplete too
      const status = event.isAborted || event.finishReason === undefined ? 'partial' : 'final'
      // an aborted reply that never streamed a part has nothing to keep
      const empty = written === undefined && !event.isContinuation && ui.parts.length === 0
      let messageId: MessageId
      try {
        messageId = await enqueue(() => (empty ? Promise.resolve(idOf(ui, event.isContinuation)) : write(ui, event.isContinuation, status)))
      } catch (error) {
        settle.reject(error)
        throw error
      }
      // an earlier step's write failed, the last one stored the whole reply: the content is healed, the failure reported
      if (failure !== undefined) return settle.reject(failure)
      settle.resolve({
        uiMessageId: ui.id,
        messageId,
        status,
        writes,
        ...(event.finishReason === undefined ? {} : { finishReason: event.finishReason }),
      })
    },
    done,
  }
}
