import { TurnlogError, type StoredEvent } from '@turnlog/core'
import { EXPORT_FORMAT, EXPORT_VERSION } from './export-sessions.js'
import { numberedLines } from './numbered-lines.js'
import { ChainVerifier, type ChainVerification } from './verify-chain.js'
import { emptyForkProblem, lineageProblem, type LineageParent } from './check-lineage.js'

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

function failAt(line: number, message: string, details: Record<string, unknown> = {}): TurnlogError {
  return new TurnlogError('IMPORT_FAILED', `line ${line}: ${message}`, { details: { line, ...details } })
}

/** A session line's `parent`, when it has the shape of one (else null: the chain check still runs). */
function parentOf(value: unknown): LineageParent | null {
  if (!isRecord(value)) return null
  const { sessionId, version, at } = value
  return typeof sessionId === 'string' && typeof version === 'number' && typeof at === 'string' ? { sessionId, version, at } : null
}

/**
 * Verifies an export file (`exportSessions`' lines) offline, without a database: every session's hash
 * chain, content hashes and redactions, by the same rules as `verifyChain` (a scrubbed event's
 * placeholder must be the one its chained `message_redacted` record commits to). Returns one
 * {@link ChainVerification} per session of the file, in file order, `version` being the event count
 * the session line announces. The file must be whole, as `importEvents` wants it: a header first, each
 * session once, a session line whose fork parent is the one its chained `session_forked` event names,
 * and an end line whose counts match, with nothing after it. Anything else (a line that is not an
 * export's record, a file cut short at a session boundary or without its end line, an empty input)
 * throws `IMPORT_FAILED` with `details.line`; a non-iterable `lines` throws `INVALID_INPUT`. Memory
 * holds one session's pending scrubs, not the file.
 */
export async function verifyExport(lines: AsyncIterable<string> | Iterable<string>): Promise<readonly ChainVerification[]> {
  const out: ChainVerification[] = []
  let current: { verifier: ChainVerifier; version: number; id: string; line: number; parent: LineageParent | null; events: number } | null =
    null
  let headerSeen = false
  let ended = false
  let lastLine = 0
  let totalEvents = 0
  const seen = new Set<string>()
  const close = (): void => {
    if (current) {
      const empty = emptyForkProblem(current.parent, current.events)
      if (empty !== undefined)
        throw failAt(current.line, `session ${current.id}: ${empty}`, { sessionId: current.id, reason: 'lineage_mismatch' })
      out.push(current.verifier.finish(current.version))
    }
    current = null
  }
  for await (const { line, text } of numberedLines(lines)) {
    lastLine = line
    if (text.trim() === '') continue
    if (ended) throw failAt(line, 'content after the end line')
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
      if (seen.has(value['id'])) throw failAt(line, `session ${value['id']} appears twice in the file`, { sessionId: value['id'] })
      seen.add(value['id'])
      current = {
        verifier: new ChainVerifier(value['id']),
        version: value['version'],
        id: value['id'],
        line,
        parent: parentOf(value['parent']),
        events: 0,
      }
    } else if (value['kind'] === 'event') {
      if (!current) throw failAt(line, 'an event line before any session line')
      const problem = eventShapeProblem(value)
      if (problem !== undefined) throw failAt(line, problem)
      const lineage = lineageProblem(current.parent, value as { seq: unknown; type: unknown; data: unknown })
      if (lineage !== undefined)
        throw failAt(line, `session ${current.id} seq ${String(value['seq'])}: ${lineage}`, {
          sessionId: current.id,
          seq: value['seq'],
          reason: 'lineage_mismatch',
        })
      current.verifier.push({ ...value, payload: value['payload'] ?? null } as unknown as StoredEvent)
      current.events++
      totalEvents++
    } else if (value['kind'] === 'end') {
      close()
      if (value['sessions'] !== seen.size || value['events'] !== totalEvents) {
        throw failAt(
          line,
          `the end line counts ${String(value['sessions'])} session(s) and ${String(value['events'])} event(s) but the file has ${seen.size} and ${totalEvents}`,
        )
      }
      ended = true
    } else {
      throw failAt(line, `unknown record kind ${JSON.stringify(value['kind'])}`)
    }
  }
  if (!headerSeen) throw failAt(Math.max(lastLine, 1), 'empty input: no header line')
  if (!ended) throw failAt(lastLine + 1, 'the file ends without its end line (truncated?)')
  return out
}
