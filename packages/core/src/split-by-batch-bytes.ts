import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'
import type { Message } from './message.js'
import { messageEnvelope } from './message-envelope.js'

/** The length of the envelope text a store writes next to a message's payload ({@link messageEnvelope}). */
function envelopeLength(m: Message<unknown>): number {
  return JSON.stringify(messageEnvelope(m, m.status === 'partial')).length
}

/**
 * Splits `messages` (in order) into runs whose payload JSON texts stay within `limit` together (a
 * store's `maxBatchBytes`), for callers that may write in several calls (imports). A message alone
 * over the limit gets a run of its own, where the store reports it.
 */
export function splitByBatchBytes(messages: readonly Message<unknown>[], limit: number): Message<unknown>[][] {
  if (!guardInput('messages', () => Array.isArray(messages)))
    throw new TurnlogError('INVALID_INPUT', 'splitByBatchBytes needs an array of messages', { details: { field: 'messages' } })
  if (typeof limit !== 'number' || !(limit > 0))
    throw new TurnlogError('INVALID_INPUT', 'splitByBatchBytes needs a positive limit', { details: { field: 'limit' } })
  return guardInput('splitByBatchBytes', () => splitRuns(messages, limit))
}

function splitRuns(messages: readonly Message<unknown>[], limit: number): Message<unknown>[][] {
  const runs: Message<unknown>[][] = []
  let run: Message<unknown>[] = []
  let size = 0
  for (const m of messages) {
    // what the store's batch budget counts for it
    let n: number
    try {
      n = JSON.stringify(m.payload).length + envelopeLength(m) + 1
    } catch {
      n = Number.POSITIVE_INFINITY // longer than any string: alone, the store refuses it
    }
    if (run.length > 0 && size + n > limit) {
      runs.push(run)
      run = []
      size = 0
    }
    run.push(m)
    size += n
  }
  if (run.length > 0) runs.push(run)
  return runs
}
