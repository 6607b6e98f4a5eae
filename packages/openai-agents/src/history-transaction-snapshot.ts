import { TurnlogError, canonicalJson, sha256Hex, type OpenAIAgentsItem } from '@turnlog/core'
import type { SessionHistoryTransactionArgs } from '@openai/agents-core'
import { agentItemMessage } from './agent-item-message.js'

/** A validated copy of `applyHistoryTransaction`'s arguments, taken once before anything is written. */
export interface HistoryTransactionSnapshot {
  readonly operationId: string
  readonly type: 'append_items' | 'replace_suffix'
  /** `append_items`: nothing; `replace_suffix`: the items the history must end with. */
  readonly expectedSuffix: readonly OpenAIAgentsItem[]
  /** The items appended (`append_items`) or put in place of the suffix (`replace_suffix`). */
  readonly items: readonly OpenAIAgentsItem[]
  /**
   * SHA-256 of the canonical JSON (RFC 8785) of the transaction: what an operation id is bound to. A
   * retry with the same content has the same hash whatever its key order.
   */
  readonly hash: string
}

const invalid = (message: string, field: string, cause?: unknown): TurnlogError =>
  new TurnlogError('INVALID_INPUT', message, cause === undefined ? { details: { field } } : { details: { field }, cause })

/**
 * Reads and validates `applyHistoryTransaction`'s arguments once (a getter is read one time): a
 * non-empty `operationId` and a transaction with exactly the SDK's fields, every item a valid
 * `openai-agents` item with a JSON form. Throws `INVALID_INPUT` (or `INVALID_MESSAGE` for an item the
 * format refuses) before anything is written; the messages never quote the items' content.
 */
export function snapshotHistoryTransaction(args: SessionHistoryTransactionArgs): HistoryTransactionSnapshot {
  let operationId: unknown
  let transaction: unknown
  try {
    if (typeof args !== 'object' || args === null) throw new TypeError('not an object')
    operationId = Reflect.get(args, 'operationId')
    transaction = Reflect.get(args, 'transaction')
  } catch (error) {
    throw invalid('session history transaction arguments are invalid', 'args', error)
  }
  if (typeof operationId !== 'string' || operationId.trim() === '') {
    throw invalid('session history transaction operationId must be a non-empty string', 'operationId')
  }
  if (typeof transaction !== 'object' || transaction === null) throw invalid('session history transaction must be an object', 'transaction')
  const fields = readFields(transaction)
  const type = fields.get('type')
  if (type === 'append_items') {
    const items = fields.get('items')
    if (fields.size !== 2 || !Array.isArray(items)) throw invalid('session history append transaction fields are invalid', 'transaction')
    return snapshot(operationId, type, [], itemsOf(items, 'transaction.items'))
  }
  if (type === 'replace_suffix') {
    const expected = fields.get('expectedSuffix')
    const replacement = fields.get('replacement')
    if (fields.size !== 3 || !Array.isArray(expected) || !Array.isArray(replacement)) {
      throw invalid('session history suffix transaction fields are invalid', 'transaction')
    }
    return snapshot(operationId, type, itemsOf(expected, 'transaction.expectedSuffix'), itemsOf(replacement, 'transaction.replacement'))
  }
  throw invalid('unsupported session history transaction type', 'transaction.type')
}

function snapshot(
  operationId: string,
  type: HistoryTransactionSnapshot['type'],
  expectedSuffix: readonly OpenAIAgentsItem[],
  items: readonly OpenAIAgentsItem[],
): HistoryTransactionSnapshot {
  const hash = sha256Hex(canonicalJson(type === 'append_items' ? { type, items } : { type, expectedSuffix, replacement: items }))
  return { operationId, type, expectedSuffix, items, hash }
}

/** The transaction's own enumerable fields, each read once. */
function readFields(transaction: object): Map<string, unknown> {
  try {
    return new Map(Object.keys(transaction).map((key) => [key, Reflect.get(transaction, key)]))
  } catch (error) {
    throw invalid('session history transaction arguments are invalid', 'transaction', error)
  }
}

/** Validated JSON copies of a list of items (a hole in the list is refused). */
function itemsOf(list: readonly unknown[], field: string): readonly OpenAIAgentsItem[] {
  const out: OpenAIAgentsItem[] = []
  for (let i = 0; i < list.length; i++) {
    if (!Object.prototype.hasOwnProperty.call(list, i))
      throw invalid('session history transaction items contain invalid or unsupported data', field)
    try {
      out.push(agentItemMessage(list[i] as OpenAIAgentsItem).payload)
    } catch (error) {
      throw new TurnlogError('INVALID_INPUT', 'session history transaction items contain invalid or unsupported data', {
        details: { field: `${field}.${i}` },
        cause: error,
      })
    }
  }
  return out
}
