import { guardInput } from './parse-input.js'
import { TurnlogError } from './turnlog-error.js'
import type { Message } from './message.js'

/**
 * The envelope text a store writes next to a message's payload (its event's `data`): `createdAt`,
 * then `externalId`, `externalScope` and `status` when set. The Postgres store writes the same text
 * (its `envelopeText`; packages/postgres/test/batch-limits.int.test.ts pins the two together).
 */
function envelopeLength(m: Message): number {
  const d: Record<string, string> = { createdAt: m.createdAt }
  if (m.externalId !== undefined) d['externalId'] = m.externalId
  if (m.externalScope !== undefined) d['externalScope'] = m.externalScope
  if (m.status === 'partial') d['status'] = 'partial'
  return JSON.stringify(d).length
}

/**
 * Splits `messages` (in order) into runs whose payload JSON texts stay within `limit` together (a
 * store's `maxBatchBytes`), for callers that may write in several calls (imports). A message alone
 * over the limit gets a run of its own, where the store reports it.
 */
export function splitByBatchBytes(messages: readonly Message[], limit: number): Message[][] {
  if (!guardInput('messages', () => Array.isArray(messages))) throw new TurnlogError('INVALID_INPUT', 'splitByBatchBytes needs an array of messages', { details: { field: 'messages' } })
  if (typeof limit !== 'number' || !(limit > 0)) throw new TurnlogError('INVALID_INPUT', 'splitByBatchBytes needs a positive limit', { details: { field: 'limit' } })
  return guardInput('splitByBatchBytes', () => splitRuns(messages, limit))
}

function splitRuns(messages: readonly Message[], limit: number): Message[][] {
  const runs: Message[][] = []
  let run: Message[] = []
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
