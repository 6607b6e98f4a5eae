import { TurnlogError, type StoredEvent } from '@turnlog/core'
import { EXPORT_FORMAT, EXPORT_VERSION } from './export-sessions.js'
import { numberedLines } from './numbered-lines.js'
import { ChainVerifier, type ChainVerification } from './verify-chain.js'

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

const HEX64 = /^[0-9a-f]{64}$/

/**
 * What is wrong with the shape of an event line, if anything: the chain writes an absent message id
 * or content hash as an empty string, so an empty string in their place must not pass for "absent".
 */
function eventShapeProblem(r: Record<string, unknown>): string | undefined {
  if (typeof r['sessionId'] !== 'string' || typeof r['eventId'] !== 'string' || r['eventId'] === '' || typeof r['type'] !== 'string') {
    return 'an event line needs sessionId, eventId and type'
  }
  if (typeof r['seq'] !== 'number' || !Number.isSafeInteger(r['seq'])) return 'seq must be an integer'
  if (r['messageId'] !== null && (typeof r['messageId'] !== 'string' || r['messageId'] === '')) return 'messageId must be an id or null'
  if (r['contentHash'] !== null && (typeof r['contentHash'] !== 'string' || !HEX64.test(r['contentHash'])))
    return 'contentHash must be 64 hex digits or null'
  if (r['payloadDigest'] !== undefined && (typeof r['payloadDigest'] !== 'string' || !HEX64.test(r['payloadDigest'])))
    return 'payloadDigest must be 64 hex digits'
  if (typeof r['hash'] !== 'string' || !HEX64.test(r['hash'])) return 'hash must be 64 hex digits'
  if (!isRecord(r['data'])) return 'data must be an object'
  if (r['payload'] !== undefined && r['payload'] !== null && !isRecord(r['payload'])) return 'payload must be an object or null'
  return undefined
}

function failAt(line: number, message: string): TurnlogError {
  return new TurnlogError('IMPORT_FAILED', `line ${line}: ${message}`, { details: { line } })
}

/**
 * Verifies an export file (`exportSessions`' lines) offline, without a database: every session's hash
 * chain, content hashes and redactions, by the same rules as `verifyChain` (a scrubbed event's
 * placeholder must be the one its chained `message_redacted` record commits to). Returns one
 * {@link ChainVerification} per session of the file, in file order, `version` being the event count
 * the session line announces. Lines that are not an export's records throw `IMPORT_FAILED` with
 * `details.line`; a non-iterable `lines` throws `INVALID_INPUT`. Memory holds one session's pending
 * scrubs, not the file.
 */
export async function verifyExport(lines: AsyncIterable<string> | Iterable<string>): Promise<readonly ChainVerification[]> {
  const out: ChainVerification[] = []
  let current: { verifier: ChainVerifier; version: number } | null = null
  let headerSeen = false
  const close = (): void => {
    if (current) out.push(current.verifier.finish(current.version))
    current = null
  }
  for await (const { line, text } of numberedLines(lines)) {
    if (text.trim() === '') continue
    let value: unknown
    try {
      value = JSON.parse(text)
    } catch {
      throw failAt(line, 'not valid JSON')
    }
    if (!isRecord(value)) throw failAt(line, 'each line must be a JSON object')
    if (!headerSeen) {
      if (value['format'] !== EXPORT_FORMAT || value['version'] !== EXPORT_VERSION) {
        throw failAt(line, `not a turnlog export of version ${EXPORT_VERSION}`)
      }
      headerSeen = true
      continue
    }
    if (value['kind'] === 'session') {
      close()
      if (typeof value['id'] !== 'string' || typeof value['version'] !== 'number') throw failAt(line, 'a session line needs id and version')
      current = { verifier: new ChainVerifier(value['id']), version: value['version'] }
    } else if (value['kind'] === 'event') {
      if (!current) throw failAt(line, 'an event line before any session line')
      const problem = eventShapeProblem(value)
      if (problem !== undefined) throw failAt(line, problem)
      current.verifier.push({ ...value, payload: value['payload'] ?? null } as unknown as StoredEvent)
    } else if (value['kind'] === 'end') {
      close()
    } else {
      throw failAt(line, `unknown record kind ${JSON.stringify(value['kind'])}`)
    }
  }
  close()
  return out
}
