import { TurnlogError } from '@turnlog/core'
import { guardInput } from '@turnlog/core/internal'
import { describeValue } from '../safe-text.js'

/**
 * A position in the transaction-ordered log: the key `(tx_id, global_position)` of the last event a
 * subscription delivered (or skipped by its filter). Readers deliver the events with a greater key.
 * `txId` is the `xid8` as a decimal string (it may exceed 2^53); `globalPosition` is a number.
 */
export interface Checkpoint {
  readonly txId: string
  readonly globalPosition: number
}

/** The checkpoint before every event: a subscription from it delivers the whole log. */
export const START_CHECKPOINT: Checkpoint = Object.freeze({ txId: '0', globalPosition: 0 })

/** Orders two checkpoints by `(txId, globalPosition)`: negative, zero or positive. */
export function compareCheckpoints(a: Checkpoint, b: Checkpoint): number {
  a = parseCheckpoint(a, 'a')
  b = parseCheckpoint(b, 'b')
  const ta = BigInt(a.txId)
  const tb = BigInt(b.txId)
  if (ta !== tb) return ta < tb ? -1 : 1
  return a.globalPosition === b.globalPosition ? 0 : a.globalPosition < b.globalPosition ? -1 : 1
}

/** Checks a caller's checkpoint; throws `INVALID_INPUT`. */
export function parseCheckpoint(value: unknown, what = 'checkpoint'): Checkpoint {
  if (typeof value !== 'object' || value === null)
    throw new TurnlogError('INVALID_INPUT', `${what} must be { txId, globalPosition }`, { details: { field: what } })
  const { txId, globalPosition } = guardInput(what, () => ({ ...(value as { txId?: unknown; globalPosition?: unknown }) }))
  if (typeof txId !== 'string' || !/^(0|[1-9][0-9]{0,19})$/.test(txId) || BigInt(txId) >= 2n ** 64n) {
    throw new TurnlogError('INVALID_INPUT', `${what}.txId must be an xid8 as a decimal string, got ${describeValue(txId)}`, {
      details: { field: `${what}.txId` },
    })
  }
  if (typeof globalPosition !== 'number' || !Number.isSafeInteger(globalPosition) || globalPosition < 0) {
    throw new TurnlogError('INVALID_INPUT', `${what}.globalPosition must be a non-negative integer, got ${describeValue(globalPosition)}`, {
      details: { field: `${what}.globalPosition` },
    })
  }
  return Object.freeze({ txId, globalPosition })
}

/** A checkpoint from a database row (`tx_id::text`, `global_position`). */
export function checkpointFromRow(txId: string, globalPosition: string | number): Checkpoint {
  return Object.freeze({ txId: String(txId), globalPosition: Number(globalPosition) })
}
