import {
  JSON_FORMAT,
  createMessage,
  messageIdFromExternal,
  sessionIdFromExternal,
  type Message,
  type MessageId,
  type SessionId,
} from '@turnlog/core'
import type { HistoryTransactionSnapshot } from './history-transaction-snapshot.js'

/** Payload of a ledger message (`json` format). */
export type LedgerRecord =
  | { readonly kind: 'generation' }
  | { readonly kind: 'pop_item' }
  | { readonly kind: 'history_transaction'; readonly operationId: string; readonly type: string; readonly hash: string }

/**
 * The companion session that records which history operations a {@link TurnlogSession} applied: one
 * `json` message per operation id, written in the same database transaction as the change it names,
 * and one per `popItem` (its idempotency key: see {@link HistoryLedger.popRecord}). Each record is
 * retracted again in its own transaction, so the live list holds only the generation record (none
 * before the first clear), however many operations and pops there were: a record is never looked up in
 * the live list, only appended again, and turnlog answers that from every id the ledger ever stored,
 * retracted or not (a known id with the same content is a duplicate, with other content a conflict).
 * `clearSession` retracts the ledger's live list and starts a new generation (a `generation` record),
 * so after a clear the same operation id applies again: the ids below are derived from the generation.
 */
export const HistoryLedger = {
  /** The ledger's session id: derived from the conversation's, so it needs no storage of its own. */
  sessionId(sessionId: SessionId): SessionId {
    return sessionIdFromExternal(`turnlog:openai-agents:operations:${sessionId}`)
  },

  /** The current generation: the id of the `generation` record heading the ledger's live list, or `initial`. */
  generation(ledger: readonly Message<unknown>[]): string {
    const head = ledger[0]
    return head !== undefined && (head.payload as LedgerRecord).kind === 'generation' ? head.id : 'initial'
  },

  /** A new generation record (written by a clear). */
  generationRecord(): Message<LedgerRecord> {
    return createMessage<LedgerRecord>({ kind: 'generation' }, { format: JSON_FORMAT })
  },

  /**
   * The record of one `popItem` call: a new id (UUIDv7) minted once per call, appended and retracted in
   * the transaction of the pop's rewind (the ledger's live list does not grow). A retry of the call
   * writes the same record: stored already (a duplicate, retracted or not), it says an earlier attempt
   * committed, and the retry rolls back what it did and returns that attempt's item.
   */
  popRecord(): Message<LedgerRecord> {
    return createMessage<LedgerRecord>({ kind: 'pop_item' }, { format: JSON_FORMAT })
  },

  /**
   * The record of one operation: its id derived from the generation and the operation id (so a
   * retried or concurrent second write of it is a duplicate, and one with other content a conflict,
   * also once it is retracted), its payload naming the transaction's hash.
   */
  operationRecord(sessionId: SessionId, generation: string, snapshot: HistoryTransactionSnapshot): Message<LedgerRecord> {
    const payload: LedgerRecord = {
      kind: 'history_transaction',
      operationId: snapshot.operationId,
      type: snapshot.type,
      hash: snapshot.hash,
    }
    return createMessage<LedgerRecord>(payload, {
      format: JSON_FORMAT,
      id: HistoryLedger.operationRecordId(sessionId, generation, snapshot.operationId),
    })
  },

  /** The id of an operation's record. */
  operationRecordId(sessionId: SessionId, generation: string, operationId: string): MessageId {
    return messageIdFromExternal(`${generation}:${operationId}`, `turnlog:openai-agents:operations:${sessionId}`)
  },

  /**
   * The message id of the `index`-th item an operation writes: UUIDv5 of the generation, the operation id
   * and the index, scoped to the session. A retried operation writes the same ids: duplicates.
   */
  itemId(sessionId: SessionId, generation: string, operationId: string, index: number): MessageId {
    return messageIdFromExternal(`${generation}:${operationId}:${index}`, `turnlog:openai-agents:${sessionId}`)
  },
} as const
