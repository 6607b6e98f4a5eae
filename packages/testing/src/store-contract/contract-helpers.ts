/**
 * Small helpers shared by the sections of the store contract suite: message builders, error
 * assertions and log readers. Everything goes through the public {@link SessionStore} port.
 * @packageDocumentation
 */
import { expect } from '@jest/globals'
import {
  canonicalJson,
  createMessage,
  isTurnlogError,
  sha256Hex,
  type CreateMessageOptions,
  type ErrorCode,
  type Message,
  type MessageId,
  type SessionId,
  type SessionStore,
  type StoredEvent,
  type TurnlogError,
} from '@turnlog/core'

/** A store opened for the contract suite, with the function that releases it. */
export interface OpenedStore {
  /** The store under test. */
  readonly store: SessionStore
  /** Closes the store and whatever `open` made for it (idempotent). */
  close(): Promise<void>
}

/**
 * Opens a store for the contract suite. Every call must return a NEW store instance (its own caches,
 * its own connections where the backend allows) over the SAME database, so the suite can play "another
 * process" (a restart after a crash, a retry whose acknowledgement was lost, a second writer).
 */
export type OpenContractStore = () => Promise<OpenedStore>

/** What every section of the suite receives. */
export interface ContractContext {
  /** The suite's main store, opened in `beforeAll`. */
  store(): SessionStore
  /** Another store instance over the same database; closed by the suite's `afterAll`. */
  reopen(): Promise<SessionStore>
  /** Opens a store that the test itself closes (for the `close()` contract). */
  open: OpenContractStore
}

/** A user message. */
export function user(content: string, options: CreateMessageOptions = {}): Message {
  return createMessage({ role: 'user', content }, options)
}

/** An assistant message with text content. */
export function assistant(content: string, options: CreateMessageOptions = {}): Message {
  return createMessage({ role: 'assistant', content }, options)
}

/** A system message. */
export function system(content: string, options: CreateMessageOptions = {}): Message {
  return createMessage({ role: 'system', content }, options)
}

/** An assistant message that calls tools (`id` per call, or `call_id` when `field` says so). */
export function toolCall(callIds: readonly string[], field: 'id' | 'call_id' = 'id', options: CreateMessageOptions = {}): Message {
  return createMessage(
    {
      role: 'assistant',
      content: '',
      tool_calls: callIds.map((id) => ({
        [field]: id,
        type: 'function',
        function: { name: 'read_file', arguments: `{"path":"${id}.md"}` },
      })),
      finish_reason: 'tool_calls',
    },
    options,
  )
}

/** A tool result answering `callId` (`tool_call_id`, or `call_id` when `field` says so). */
export function toolResult(
  callId: string,
  content: string,
  field: 'tool_call_id' | 'call_id' = 'tool_call_id',
  options: CreateMessageOptions = {},
): Message {
  return createMessage({ role: 'tool', [field]: callId, content }, options)
}

/** Scaffolding: a message marked ephemeral at creation. */
export function nudge(content = 'please continue'): Message {
  return createMessage({ role: 'user', content }, { ephemeral: true })
}

/**
 * Awaits `work`, asserts it rejects with a turnlog error of `code` and returns the error for further
 * assertions on `details`.
 */
export async function expectTurnlogError(work: Promise<unknown> | (() => Promise<unknown>), code: ErrorCode): Promise<TurnlogError> {
  let caught: unknown
  let settled = false
  try {
    await (typeof work === 'function' ? work() : work)
    settled = true
  } catch (error) {
    caught = error
  }
  if (settled) throw new Error(`expected a ${code} error, but the call succeeded`)
  if (!isTurnlogError(caught)) throw new Error(`expected a TurnlogError ${code}, got ${String(caught)}`, { cause: caught })
  expect(caught.code).toBe(code)
  return caught
}

/** Every event of a session, in seq order. */
export async function eventsOf(store: SessionStore, sessionId: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const e of store.events(sessionId)) out.push(e)
  return out
}

/** The ids of the session's live list, in order. */
export async function liveIds(store: SessionStore, sessionId: string): Promise<MessageId[]> {
  const { messages } = await store.load(sessionId)
  return messages.map((m) => m.id)
}

/** The content hash recomputed from a payload's bytes (never a memoised or database-provided one). */
export function freshHash(payload: unknown): string {
  return sha256Hex(canonicalJson(payload))
}

/** A new session on `store`. */
export async function newSession(store: SessionStore): Promise<SessionId> {
  return store.createSession()
}

/** Appends `messages` one batch at a time and returns the final version. */
export async function appendAll(store: SessionStore, sessionId: string, messages: readonly Message[]): Promise<number> {
  const { version } = await store.append(sessionId, messages)
  return version
}
