/**
 * Garbage in, typed errors out, for the audit package's public functions that take user input:
 * `audit`, `verifyChain`, `exportSessions` (read-only), `importEvents` (mutated export files),
 * `importTranscript` (garbage JSONL). (`importHermes` has its own: packages/hermes/test/hermes-bad-input.prop.test.ts.)
 * Each call must either succeed (a read returns a well-formed answer; an import reads back exactly
 * what it was given) or reject with a TurnlogError whose code is one an input error may get: never a
 * raw error, never `DB_ERROR`, never a hang, and never a partial write (a read-only call changes
 * nothing; an import that fails leaves the database as it was, apart from the complete sessions that
 * `importEvents` commits one by one before the failing one, which must then equal
 * the file's). Runs on Postgres, and a smaller import run on embedded PGlite.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { sql } from 'kysely'
import { GENESIS_HASH, createMessage, toFrozenJson, type Message, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import {
  IMPORT_INPUT_CODES,
  OutcomeTally,
  buildKit,
  chatPayloadArb,
  createTestDatabase,
  expectEveryExportRejectsGarbage,
  describeThrown as describeError,
  garbageArb,
  invalidIdArb,
  isRecordingProgress,
  jsonValueArb,
  messageArb,
  openTestStore,
  outcomeCode,
  recordingProgress,
  safeTextArb,
  settle,
  sqlArb,
  storeSnapshot as snapshot,
  weirdStringArb,
  type Build as KitBuild,
  VALUE_EXPORT,
  functionExport,
  type ExportSpec,
  type TestDatabase,
} from '@turnlog/testing'
import * as auditPackage from '@turnlog/audit'
import {
  AUDIT_CHECKS,
  FINDING_KINDS,
  audit,
  countFindings,
  exportSessions,
  importEvents,
  importTranscript,
  verifyChain,
  type AuditReport,
  type ChainVerification,
  type ExportEventRecord,
  type ImportResult,
  type ImportTranscriptResult,
} from '@turnlog/audit'
import { exportedChainHash } from '@turnlog/audit/internal'
import { seedRealisticSession } from './audit-fixtures.js'

// ---------------------------------------------------------------------------------------------------
// values built at call time, printable in counterexamples

/** What a generated argument can refer to. */
interface Ctx {
  readonly realistic: SessionId
  readonly fork: SessionId
  /** A fork made after the redaction: its copy of the redacted message is a placeholder (`data.redacted`). */
  readonly redactedFork: SessionId
  readonly hostile: SessionId
  readonly empty: SessionId
  readonly missing: string
  /** The realistic session's live list. */
  readonly live: readonly Message[]
  /** Progress reports the run's onProgress received. */
  readonly progress: unknown[]
}

type Build<T = unknown> = KitBuild<Ctx, T>

const { build, lit, mostly, maybeUndefined, value, objectOf, listOf } = buildKit<Ctx>()

const recording = recordingProgress(build)
const onProgressArg = fc.oneof({ weight: 4, arbitrary: fc.constant(recording) }, { weight: 1, arbitrary: lit(garbageArb) })

// ---------------------------------------------------------------------------------------------------
// the harness: snapshots, outcomes, the tally

/** Per session: version, event count and last link; what changed between two of these was written. */
async function sessionStates(store: PostgresStore): Promise<Map<string, string>> {
  const { rows } = await sql<{ id: string; s: string }>`
    select s.session_id::text as id,
           concat_ws('|', s.version, s.tenant_id, s.metadata::text,
             (select count(*) from turnlog.events e where e.session_id = s.session_id),
             (select encode(e.hash, 'hex') from turnlog.events e where e.session_id = s.session_id order by e.seq desc limit 1)) as s
      from turnlog.sessions s`.execute(store.db)
  return new Map(rows.map((r) => [r.id, r.s]))
}

function changedSessions(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...after].filter(([id, s]) => before.get(id) !== s).map(([id]) => id)
}

const tally: OutcomeTally = new OutcomeTally(IMPORT_INPUT_CODES)

function checkNoPollution(): void {
  expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
  expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
}

async function collect(lines: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const line of lines) out.push(line)
  return out
}

// ---------------------------------------------------------------------------------------------------
// the fixtures: a source store (read-only calls, the export the import files come from), a target

let sourceDb: TestDatabase
let targetDb: TestDatabase
let source: PostgresStore
let target: PostgresStore
let ctxBase: Omit<Ctx, 'missing' | 'progress'>
/** The export of every session of `source`, line by line (header and end included). */
let reference: string[]

beforeAll(async () => {
  ;[sourceDb, targetDb] = await Promise.all([createTestDatabase(), createTestDatabase()])
  ;[source, target] = await Promise.all([
    openStore({ connectionString: sourceDb.connectionString }),
    openStore({ connectionString: targetDb.connectionString }),
  ])

  // a realistic session (tools, a partial finalized, a rewind, a revision, a compaction) and its fork,
  // with a redaction and a recorded conflict; a tenant's session of hostile messages; an empty one
  const realistic = await seedRealisticSession(source)
  const last = realistic.live[realistic.live.length - 1] as Message
  await source.redact(realistic.sessionId, last.id, { reason: 'bad-input fixture' })
  const redactedFork = await source.fork(realistic.sessionId, { at: last.id })
  await source
    .append(realistic.sessionId, [createMessage({ role: 'user', content: 'a different text' }, { id: (realistic.live[1] as Message).id })])
    .catch(() => {})
  const hostile = await source.createSession({ tenantId: 'tenant-a', metadata: { fixture: 'hostile', text: 'nul \u0000 lone \ud800' } })
  await source.flush(hostile, fc.sample(messageArb, { numRuns: 6, seed: 42 }))
  const empty = await source.createSession({ metadata: null })
  ctxBase = {
    realistic: realistic.sessionId,
    fork: realistic.forkId,
    redactedFork,
    hostile,
    empty,
    live: (await source.load(realistic.sessionId)).messages,
  }
  reference = await collect(exportSessions(source, { all: true }))
}, 60_000)

afterAll(async () => {
  await Promise.all([source?.close(), target?.close()])
  await Promise.all([sourceDb?.drop(), targetDb?.drop()])
  console.log(tally.report('audit bad-input'))
})

const newCtx = (): Ctx => ({ ...ctxBase, missing: randomUUID(), progress: [] })

// ---------------------------------------------------------------------------------------------------
// audit, verifyChain, exportSessions: read-only

const sessionArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 3, arbitrary: fc.constant(build('<realistic>', (c) => c.realistic)) },
  { weight: 1, arbitrary: fc.constant(build('<fork>', (c) => c.fork)) },
  { weight: 1, arbitrary: fc.constant(build('<fork after the redaction>', (c) => c.redactedFork)) },
  { weight: 1, arbitrary: fc.constant(build('<hostile>', (c) => c.hostile)) },
  { weight: 1, arbitrary: fc.constant(build('<empty>', (c) => c.empty)) },
  { weight: 1, arbitrary: fc.constant(build('<realistic upper-case>', (c) => c.realistic.toUpperCase())) },
  { weight: 1, arbitrary: fc.constant(build('<missing>', (c) => c.missing)) },
  { weight: 1, arbitrary: lit(invalidIdArb) },
  { weight: 1, arbitrary: lit(garbageArb) },
)

/** Transcript items: the live list in every accepted form, provider messages, and garbage. */
const transcriptArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(build('<live as provider messages>', (c) => c.live.map((m) => ({ ...m.payload })))) },
  { weight: 1, arbitrary: fc.constant(build('<live as message objects>', (c) => c.live.map((m) => ({ id: m.id, payload: m.payload })))) },
  { weight: 1, arbitrary: fc.constant(build('<live as JSON lines>', (c) => c.live.map((m) => JSON.stringify(m)))) },
  {
    weight: 2,
    arbitrary: lit(
      fc.array(
        fc.oneof(
          chatPayloadArb,
          garbageArb,
          weirdStringArb,
          fc.record({ role: fc.constant('user'), content: fc.array(fc.oneof(garbageArb, fc.constant(null))) }),
        ),
        { maxLength: 4 },
      ),
    ),
  },
  { weight: 1, arbitrary: lit(garbageArb) },
)

const liveArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 2, arbitrary: fc.constant(build('<live>', (c) => c.live)) },
  { weight: 1, arbitrary: fc.constant(build('<live reversed>', (c) => [...c.live].reverse())) },
  { weight: 1, arbitrary: lit(fc.array(messageArb, { maxLength: 3 })) },
  { weight: 1, arbitrary: lit(fc.array(garbageArb, { maxLength: 3 })) },
  { weight: 1, arbitrary: lit(garbageArb) },
)

const CHECKS = Object.keys(AUDIT_CHECKS)

type ReadCall = { method: 'audit' | 'verifyChain' | 'exportSessions'; args: Build[] }

const readCallArb: fc.Arbitrary<ReadCall> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc
      .tuple(
        fc.oneof(
          { weight: 4, arbitrary: sessionArg },
          { weight: 1, arbitrary: lit(fc.constantFrom<unknown>({ all: true }, { all: 'yes' }, { all: true, extra: 1 }, [])) },
        ),
        maybeUndefined(
          mostly(
            objectOf({
              checks: mostly(
                fc.oneof(lit(fc.subarray(CHECKS)), lit(fc.array(fc.oneof(fc.constantFrom(...CHECKS), garbageArb), { maxLength: 3 }))),
              ),
              transcript: mostly(transcriptArg),
              live: mostly(liveArg),
              onProgress: onProgressArg,
            }),
          ),
        ),
      )
      .map((args) => ({ method: 'audit' as const, args })),
  },
  { weight: 2, arbitrary: fc.tuple(sessionArg).map((args) => ({ method: 'verifyChain' as const, args })) },
  {
    weight: 3,
    arbitrary: fc
      .tuple(
        fc.oneof(
          { weight: 2, arbitrary: objectOf({ sessionIds: mostly(listOf(sessionArg)) }) },
          {
            weight: 2,
            arbitrary: objectOf({
              all: mostly(lit(fc.constant(true)), 6),
              tenantId: mostly(lit(fc.oneof(fc.constant('tenant-a'), weirdStringArb))),
            }),
          },
          { weight: 1, arbitrary: lit(garbageArb) },
        ),
        maybeUndefined(mostly(objectOf({ verify: mostly(lit(fc.boolean())), pageSize: mostly(lit(fc.integer({ min: -2, max: 1200 }))) }))),
      )
      .map((args) => ({ method: 'exportSessions' as const, args })),
  },
)

/** The lines of one session in `lines` (its session line and its event lines). */
function blockOf(lines: readonly string[], sessionId: string): string[] {
  const out: string[] = []
  let inside = false
  for (const line of lines) {
    const r = JSON.parse(line) as { kind?: string; id?: string }
    if (r.kind === 'session') inside = r.id === sessionId
    else if (r.kind !== 'event') inside = false
    if (inside) out.push(line)
  }
  return out
}

async function checkRead(call: ReadCall, args: unknown[], result: unknown, ctx: Ctx): Promise<void> {
  if (call.method === 'verifyChain') {
    const v = result as ChainVerification
    const info = await source.getSession(String(args[0]))
    expect(v).toMatchObject({ ok: true, sessionId: info.sessionId, version: info.version, breaks: [] })
    expect(v.checked).toBe(info.version)
  } else if (call.method === 'audit') {
    const report = result as AuditReport
    const all = typeof args[0] === 'object'
    const sessions = (await source.sessions({ limit: 1000 })).sessions.length
    expect(report.formatVersion).toBe(1)
    expect(report.sessionsAudited).toBe(all ? sessions : 1)
    expect(report.counts).toEqual(countFindings(report.findings))
    for (const f of report.findings) expect(Object.hasOwn(FINDING_KINDS, f.kind)).toBe(true)
    // the source is sound: whatever the options, the log checks find nothing (a transcript or live list may differ)
    expect(report.findings.filter((f) => ['chain', 'projection', 'fold', 'identity'].includes(FINDING_KINDS[f.kind].check))).toEqual([])
    const options = args[1] as { onProgress?: unknown } | undefined
    if (isRecordingProgress(options)) expect(ctx.progress).toHaveLength(report.sessionsAudited)
  } else {
    const lines = result as string[]
    const records = lines.map((l) => JSON.parse(l) as { kind?: string; format?: string; sessions?: number; events?: number; id?: string })
    expect(records[0]?.format).toBe('turnlog-export')
    const end = records[records.length - 1]
    expect(end?.kind).toBe('end')
    expect(end?.sessions).toBe(records.filter((r) => r.kind === 'session').length)
    expect(end?.events).toBe(records.filter((r) => r.kind === 'event').length)
    // each session exactly as the reference export has it
    for (const r of records) if (r.kind === 'session') expect(blockOf(lines, r.id as string)).toEqual(blockOf(reference, r.id as string))
    const selection = args[0] as { all?: unknown; tenantId?: unknown; sessionIds?: unknown[] }
    if (selection.all === true && selection.tenantId === undefined) expect(lines.slice(1)).toEqual(reference.slice(1))
    if (Array.isArray(selection.sessionIds)) {
      expect(records.filter((r) => r.kind === 'session').map((r) => r.id)).toEqual([
        ...new Set(selection.sessionIds.map((id) => String(id).toLowerCase())),
      ])
    }
  }
}

async function invokeRead(call: ReadCall, args: unknown[]): Promise<unknown> {
  if (call.method === 'audit') return audit(source, args[0] as never, args[1] as never)
  if (call.method === 'verifyChain') return verifyChain(source, args[0] as never)
  return collect(exportSessions(source, args[0] as never, args[1] as never))
}

// ---------------------------------------------------------------------------------------------------
// importEvents: files made from the reference export, re-keyed per run, then damaged

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** A parsed line of an export file. */
type Rec = Record<string, unknown>

/**
 * Gives the sessions of `lines` fresh ids (sessions, events, messages: every UUID outside payloads,
 * consistently) and recomputes every chain link, so the file imports as new sessions.
 */
function rekey(lines: readonly string[]): string[] {
  const map = new Map<string, string>()
  const fresh = (id: string): string => {
    let m = map.get(id)
    if (m === undefined) {
      m = randomUUID()
      map.set(id, m)
    }
    return m
  }
  const deep = (v: unknown): unknown =>
    typeof v === 'string'
      ? UUID.test(v)
        ? fresh(v)
        : v
      : Array.isArray(v)
        ? v.map(deep)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(Object.entries(v).map(([k, x]) => [k, deep(x)]))
          : v
  const out = lines.map((line) => {
    const r = JSON.parse(line) as Rec
    if (r['kind'] === 'session') {
      const parent = r['parent'] as Rec | null
      return {
        ...r,
        id: fresh(r['id'] as string),
        parent: parent === null ? null : { ...parent, sessionId: fresh(parent['sessionId'] as string), at: fresh(parent['at'] as string) },
      }
    }
    if (r['kind'] === 'event') {
      return {
        ...r,
        sessionId: fresh(r['sessionId'] as string),
        eventId: fresh(r['eventId'] as string),
        messageId: r['messageId'] === null ? null : fresh(r['messageId'] as string),
        data: deep(r['data']),
      }
    }
    return r
  })
  return rehash(out).map((r) => JSON.stringify(r))
}

/** Recomputes every event's chain link, session by session, in file order. */
function rehash(records: readonly Rec[]): Rec[] {
  let prev = GENESIS_HASH
  return records.map((r) => {
    if (r['kind'] === 'session') prev = GENESIS_HASH
    if (r['kind'] !== 'event') return r
    try {
      const hash = exportedChainHash(prev, r as unknown as ExportEventRecord)
      prev = hash
      return { ...r, hash }
    } catch {
      return r // a field too broken to hash: the import refuses it anyway
    }
  })
}

/** A file of some sessions of the reference: header, their blocks (a fork needs no parent in the file), end. */
function fileOf(ids: readonly string[]): string[] {
  const blocks = ids.flatMap((id) => blockOf(reference, id))
  const sessions = blocks.filter((l) => l.includes('"kind":"session"')).length
  return [reference[0] as string, ...blocks, JSON.stringify({ kind: 'end', sessions, events: blocks.length - sessions })]
}

type Damage =
  | { kind: 'none' | 'twice' | 'crlf' | 'joined' | 'blank lines' }
  | { kind: 'drop' | 'duplicate' | 'swap' | 'truncate'; at: number }
  | { kind: 'replace' | 'insert'; at: number; text: string }
  | { kind: 'field'; at: number; field: string; value: unknown; rehash: boolean }
  | { kind: 'item'; at: number; value: unknown }

const FIELDS = [
  'kind',
  'id',
  // an event record's
  ...['sessionId', 'seq', 'eventId', 'type', 'messageId', 'contentHash', 'payload', 'data', 'recordedAt', 'hash', 'payloadDigest'],
  // a session record's
  ...['tenantId', 'metadata', 'createdAt', 'updatedAt', 'version', 'parent'],
  // the header's and the end's
  ...['format', 'sessions', 'events'],
  '__proto__',
]

const fieldValueArb: fc.Arbitrary<unknown> = fc.oneof(
  garbageArb,
  jsonValueArb,
  chatPayloadArb,
  fc.constantFrom<unknown>(
    '0000-01-01T00:00:00Z',
    '2024-02-30T00:00:00Z',
    '2024-01-01T24:00:00Z',
    '2024-01-01T00:00:00.123456Z',
    '2024-01-01T00:00:00+15:00',
    '2024-01-01T00:00:00+99:99',
    { ids: ['not-a-uuid'] },
    { covered: [{ id: 'x' }], summary: ['y'] },
    { summary: [1] },
    { covered: 'x' },
    { redacted: true },
    { status: 'partial' },
    { createdAt: '2024-01-01T00:00:00Z', inheritedFrom: 'nope' },
    'message_redacted',
    'session_forked',
    'messages_compacted',
    'messages_retracted',
    'a'.repeat(64),
    'A'.repeat(64),
    { sessionId: '00000000-0000-4000-8000-000000000000', version: 1, at: '00000000-0000-4000-8000-000000000000' },
    -1,
    2 ** 53,
    1.5,
    0,
  ),
)

const damageArb: fc.Arbitrary<Damage> = fc.oneof(
  {
    weight: 5,
    arbitrary: fc.constantFrom<Damage>({ kind: 'none' }, { kind: 'twice' }, { kind: 'crlf' }, { kind: 'joined' }, { kind: 'blank lines' }),
  },
  {
    weight: 2,
    arbitrary: fc.record({ kind: fc.constantFrom('drop', 'duplicate', 'swap', 'truncate'), at: fc.nat(40) }) as fc.Arbitrary<Damage>,
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constantFrom('replace', 'insert'),
      at: fc.nat(40),
      text: fc.oneof(
        sqlArb,
        weirdStringArb,
        fc.constantFrom(
          '{}',
          '[]',
          'null',
          '1',
          '"x"',
          '{"kind":"end"}',
          '{"kind":"session"}',
          '{"kind":"event"}',
          '{"format":"turnlog-export","version":2}',
          '\ufeff{}',
          '{"kind":"end","sessions":0,"events":0}',
        ),
        garbageArb.map((g) => {
          try {
            return JSON.stringify(g) ?? 'undefined'
          } catch {
            return 'unprintable'
          }
        }),
      ),
    }) as fc.Arbitrary<Damage>,
  },
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('field'),
      at: fc.nat(40),
      field: fc.constantFrom(...FIELDS),
      value: fieldValueArb,
      rehash: fc.boolean(),
    }) as fc.Arbitrary<Damage>,
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('item'), at: fc.nat(40), value: garbageArb }) as fc.Arbitrary<Damage> },
)

/** Applies `damage`; returns the iterable items (strings, unless damaged into something else). */
function damaged(lines: readonly string[], damage: Damage): unknown[] {
  const n = lines.length
  switch (damage.kind) {
    case 'none':
    case 'twice':
      return [...lines]
    case 'crlf':
      return lines.map((l) => `${l}\r\n`)
    case 'joined':
      return [lines.join('\n')]
    case 'blank lines':
      return lines.flatMap((l) => [l, '', '   '])
    case 'drop':
      return lines.filter((_, i) => i !== damage.at % n)
    case 'duplicate':
      return lines.flatMap((l, i) => (i === damage.at % n ? [l, l] : [l]))
    case 'swap': {
      const out = [...lines]
      const i = damage.at % (n - 1)
      ;[out[i], out[i + 1]] = [out[i + 1] as string, out[i] as string]
      return out
    }
    case 'truncate':
      return lines.slice(0, 1 + (damage.at % (n - 1)))
    case 'replace':
      return lines.map((l, i) => (i === damage.at % n ? damage.text : l))
    case 'insert':
      return lines.flatMap((l, i) => (i === damage.at % n ? [damage.text, l] : [l]))
    case 'item':
      return lines.map((l, i) => (i === damage.at % n ? damage.value : l))
    case 'field': {
      const records = lines.map((l) => JSON.parse(l) as Rec)
      const at = damage.at % n
      const r = records[at] as Rec
      // defineProperty: a `__proto__` field becomes an own property, as JSON.parse makes it
      records[at] = Object.defineProperty({ ...r }, damage.field, {
        value: damage.value,
        enumerable: true,
        writable: true,
        configurable: true,
      })
      const out = damage.rehash ? rehash(records) : records
      return out.map((r2) => {
        try {
          return JSON.stringify(r2) ?? 'undefined'
        } catch {
          return '{"unprintable":true}'
        }
      })
    }
  }
}

/** The records of a file's sessions, by session id (session line and event lines), as JSON values. */
function fileSessions(lines: readonly string[]): Map<string, unknown[]> {
  const out = new Map<string, unknown[]>()
  let current: unknown[] | null = null
  for (const line of lines) {
    let r: Rec
    try {
      r = JSON.parse(line) as Rec
    } catch {
      current = null
      continue
    }
    if (typeof r !== 'object' || r === null) {
      current = null
      continue
    }
    if (r['kind'] === 'session') out.set(r['id'] as string, (current = [r]))
    else if (r['kind'] === 'event' && current) current.push(r)
    else current = null
  }
  return out
}

const SESSION_KEYS = ['kind', 'id', 'tenantId', 'metadata', 'createdAt', 'updatedAt', 'version', 'parent']
const EVENT_KEYS = ['kind', 'sessionId', 'seq', 'eventId', 'type', 'messageId', 'contentHash', 'payload', 'data', 'recordedAt', 'hash']

/**
 * A record as the format defines it: its known fields (absent ones null), unknown ones dropped, and
 * timestamps as instants (the store keeps the instant; an export writes it as UTC with milliseconds).
 */
function asFormat(value: unknown): unknown {
  const r = value as Rec
  const keys = r['kind'] === 'session' ? SESSION_KEYS : EVENT_KEYS
  const instant = (v: unknown): unknown =>
    typeof v === 'string' && Number.isFinite(Date.parse(v)) ? new Date(Date.parse(v)).toISOString() : v
  const out: Rec = Object.fromEntries(
    keys.map((k) => [k, ['createdAt', 'updatedAt', 'recordedAt'].includes(k) ? instant(r[k] ?? null) : (r[k] ?? null)]),
  )
  if (r['kind'] === 'event' && r['payloadDigest'] !== undefined) out['payloadDigest'] = r['payloadDigest']
  return out
}

/** What the store holds of `sessionId`, as export records. */
async function storedSession(store: PostgresStore, sessionId: string): Promise<unknown[]> {
  const lines = await collect(exportSessions(store, { sessionIds: [sessionId] }))
  return lines.slice(1, -1).map((l) => JSON.parse(l) as unknown)
}

/** The source sessions an import file can hold. */
type FileSession = 'realistic' | 'fork' | 'redactedFork' | 'hostile' | 'empty'

type ImportCall =
  | {
      method: 'importEvents'
      sessions: FileSession[]
      damage: Damage
      container: 'array' | 'async' | 'garbage'
      garbage: unknown
      options: Build
      badStore: Build | null
    }
  | { method: 'importTranscript'; lines: Build; options: Build }

const sessionsForFileArb: fc.Arbitrary<FileSession[]> = fc.subarray<FileSession>(
  ['realistic', 'fork', 'redactedFork', 'hostile', 'empty'],
  { minLength: 1 },
)

const importEventsArb: fc.Arbitrary<ImportCall> = fc
  .record({
    sessions: sessionsForFileArb,
    damage: damageArb,
    container: fc.constantFrom<'array' | 'async' | 'garbage'>('array', 'array', 'array', 'array', 'async', 'async', 'async', 'garbage'),
    garbage: garbageArb,
    options: maybeUndefined(mostly(objectOf({ onProgress: onProgressArg }), 6)),
    badStore: fc.oneof(
      { weight: 12, arbitrary: fc.constant(null) },
      { weight: 1, arbitrary: lit(fc.oneof(garbageArb, fc.constant({ db: 'not kysely' }))) },
    ),
  })
  .map((r) => ({ method: 'importEvents' as const, ...r }))

/** A transcript line: a provider message, a turnlog envelope, or garbage. */
const transcriptLineArb: fc.Arbitrary<Build<string>> = fc.oneof(
  { weight: 4, arbitrary: lit(chatPayloadArb.map((p) => JSON.stringify(p))) },
  { weight: 2, arbitrary: lit(messageArb.map((m) => JSON.stringify(m))) },
  {
    weight: 1,
    arbitrary: lit(
      fc
        .record(
          {
            id: fc.oneof(fc.uuid(), invalidIdArb),
            payload: fc.oneof(chatPayloadArb, garbageArb),
            createdAt: fc.oneof(
              fc.date({ noInvalidDate: true }).map((d) => d.toISOString()),
              garbageArb,
            ),
            ephemeral: fc.oneof(fc.boolean(), garbageArb),
            externalId: fc.oneof(weirdStringArb, garbageArb),
          },
          { requiredKeys: ['payload'] },
        )
        .map((e) => {
          try {
            return JSON.stringify(e) ?? 'undefined'
          } catch {
            return '{"payload":1}'
          }
        }),
    ),
  },
  {
    weight: 1,
    arbitrary: lit(
      fc.oneof(
        sqlArb,
        weirdStringArb,
        fc.constantFrom(
          '',
          '{}',
          '[]',
          'null',
          '{"role":"user"}',
          '{"payload":{"role":"user","content":"x"},"ephemeral":true}',
          '{"role":"user","content":"x"}\n{"role":"assistant","content":"y"}',
        ),
      ),
    ),
  },
  { weight: 1, arbitrary: fc.constant(build('<a live message of realistic, as an envelope>', (c) => JSON.stringify(c.live[1]))) },
  {
    weight: 1,
    arbitrary: fc.constant(
      build('<a live message of realistic, changed>', (c) =>
        JSON.stringify({ ...(c.live[1] as Message), payload: { role: 'user', content: `changed ${randomUUID()}` } }),
      ),
    ),
  },
)

const importTranscriptArb: fc.Arbitrary<ImportCall> = fc
  .record({
    lines: fc.oneof(
      {
        weight: 6,
        arbitrary: fc
          .array(transcriptLineArb, { maxLength: 5 })
          .map((items) => build(`[${items.map((i) => i[fc.toStringMethod]()).join(', ')}]`, (c) => items.map((i) => i(c)))),
      },
      { weight: 1, arbitrary: lit(fc.array(garbageArb, { maxLength: 3 })) },
      { weight: 1, arbitrary: lit(garbageArb) },
    ),
    options: maybeUndefined(
      mostly(
        objectOf({
          sessionId: fc.oneof(
            { weight: 3, arbitrary: lit(fc.uuid()) },
            { weight: 1, arbitrary: fc.constant(build('<realistic>', (c) => c.realistic)) },
            { weight: 1, arbitrary: lit(invalidIdArb) },
            { weight: 1, arbitrary: lit(garbageArb) },
          ),
          tenantId: mostly(lit(fc.oneof(safeTextArb, weirdStringArb))),
          metadata: mostly(lit(jsonValueArb)),
        }),
        6,
      ),
    ),
  })
  .map((r) => ({ method: 'importTranscript' as const, ...r }))

const importCallArb: fc.Arbitrary<ImportCall> = fc.oneof(
  { weight: 5, arbitrary: importEventsArb },
  { weight: 3, arbitrary: importTranscriptArb },
)

/**
 * True when every key of `options` holding a value is one of `known` (any other is refused as not an
 * option, docs/errors.md); false when its keys cannot even be read (a Proxy, a throwing getter).
 */
function onlyOptions(options: object, known: readonly string[]): boolean {
  try {
    return Object.entries(options).every(([key, v]) => known.includes(key) || v === undefined)
  } catch {
    return false
  }
}

/** Runs one import call against `store` and checks the rule. */
async function runImport(store: PostgresStore, call: ImportCall): Promise<void> {
  const ctx = newCtx()
  const before = await snapshot(store, false)
  const states = await sessionStates(store)
  if (call.method === 'importEvents') {
    const ids = call.sessions.map((name) => ctx[name])
    const file = rekey(fileOf(ids))
    const items = damaged(file, call.damage)
    const lines =
      call.container === 'garbage'
        ? call.garbage
        : call.container === 'async'
          ? (async function* () {
              yield* items
            })()
          : items
    const options = call.options(ctx) as { onProgress?: unknown } | undefined
    const target2 = call.badStore === null ? store : (call.badStore(ctx) as PostgresStore)
    const outcome = await settle(60_000, 'importEvents', () => importEvents(target2, lines as never, options as never))
    checkNoPollution()
    const intact =
      ['none', 'twice', 'crlf', 'joined', 'blank lines'].includes(call.damage.kind) &&
      call.container !== 'garbage' &&
      call.badStore === null
    const validOptions =
      options === undefined ||
      (typeof options === 'object' &&
        options !== null &&
        !Array.isArray(options) &&
        (options.onProgress === undefined || typeof options.onProgress === 'function') &&
        onlyOptions(options, ['onProgress']))
    // what the file says, as importEvents reads it (items split into lines, CR and blank lines dropped;
    // an item that is not a string ends the reading there, so it ends the session block it follows)
    const expected = fileSessions(
      items
        .map((i) => (typeof i === 'string' ? i : '\u0000 not a line'))
        .flatMap((i) => i.replace(/\r?\n$/, '').split('\n'))
        .map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l))
        .filter((l) => l.trim() !== ''),
    )
    if (outcome.ok) {
      tally.count('importEvents ok')
      const result = outcome.value
      // every session it reports is stored exactly as the file has it
      for (const id of result.sessionIds) expect((await storedSession(store, id)).map(asFormat)).toEqual(expected.get(id)?.map(asFormat))
      if (intact) expect(result.sessionIds).toEqual([...fileSessions(file).keys()])
      if (isRecordingProgress(options)) expect(ctx.progress).toHaveLength(result.sessions)
      if (call.damage.kind === 'twice') {
        const again = await importEvents(store, file)
        expect(again).toEqual({
          sessions: result.sessions,
          eventsWritten: 0,
          eventsSkipped: result.eventsWritten + result.eventsSkipped,
          sessionIds: result.sessionIds,
        } satisfies ImportResult)
      }
      return
    }
    if (intact && validOptions)
      throw new Error(`importEvents refused an intact export (${call.damage.kind}): ${describeError(outcome.error)}`, {
        cause: outcome.error,
      })
    tally.checkRejection('importEvents', outcome.error)
    // sessions committed before the failing line are complete and exact; nothing else changed
    for (const id of changedSessions(states, await sessionStates(store)))
      expect((await storedSession(store, id)).map(asFormat)).toEqual(expected.get(id)?.map(asFormat))
    return
  }
  if (call.method === 'importTranscript') {
    const lines = call.lines(ctx)
    const options = call.options(ctx) as { sessionId?: string; tenantId?: string; metadata?: unknown } | undefined
    const outcome = await settle(60_000, 'importTranscript', () => importTranscript(store, lines as never, options as never))
    checkNoPollution()
    if (outcome.ok) {
      tally.count('importTranscript ok')
      const result = outcome.value as ImportTranscriptResult
      const info = await store.getSession(result.sessionId)
      expect(result.version).toBe(info.version)
      if (options?.tenantId !== undefined) expect(info.tenantId).toBe(options.tenantId)
      // every message line is live in the session with its exact payload text (in order, in a new session)
      const live = (await store.load(result.sessionId)).messages.map((m) => JSON.stringify(m.payload))
      const wanted = Array.from(lines as Iterable<string>)
        .flatMap((l) => l.split('\n'))
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Rec)
        .filter((v) => !('payload' in v && !('role' in v) && v['ephemeral'] === true))
        .map((v) => JSON.stringify(toFrozenJson('role' in v || !('payload' in v) ? v : v['payload'])))
      if (states.get(result.sessionId) === undefined) expect(live).toEqual(wanted)
      else for (const w of wanted) expect(live).toContain(w)
      expect(result.appended + result.duplicates).toBe(wanted.length)
      return
    }
    tally.checkRejection('importTranscript', outcome.error)
    expect(await snapshot(store, false)).toBe(before)
    return
  }
}

// ---------------------------------------------------------------------------------------------------
// cases every run includes (fast-check `examples`): each once escaped raw, reached the database, or half-wrote

const REALISTIC = build('<realistic>', (c) => c.realistic)

const READ_EXAMPLES: [ReadCall][] = [
  [{ method: 'audit', args: [REALISTIC, value(null)] }],
  [{ method: 'audit', args: [REALISTIC, value({ onProgress: 'log' })] }],
  [{ method: 'audit', args: [value({ all: true }), value({ onProgress: 1 })] }],
  [{ method: 'audit', args: [REALISTIC, value({ checks: [10n] })] }],
  [{ method: 'audit', args: [REALISTIC, value({ checks: [Object.create(null) as unknown] }, '{ checks: [<null-prototype object>] }')] }],
  [{ method: 'audit', args: [REALISTIC, value({ transcript: [{ role: 'user', content: [null] }] })] }],
  [{ method: 'exportSessions', args: [value({ all: true }), value(null)] }],
]

/** An `importEvents` example: the file of `sessions` with `damage`, as an array of lines, into the real store. */
const importEventsExample = (sessions: FileSession[], damage: Damage, options: Build = value(undefined)): [ImportCall] => [
  { method: 'importEvents', sessions, damage, container: 'array', garbage: null, options, badStore: null },
]

const IMPORT_EXAMPLES: [ImportCall][] = [
  // a session with a scrubbed payload, and a fork's copy of one: an export of them imports
  importEventsExample(['realistic', 'redactedFork'], { kind: 'none' }),
  // a timestamp Postgres cannot hold, the chain recomputed: the database refuses it
  importEventsExample(['hostile'], { kind: 'field', at: 2, field: 'recordedAt', value: '0000-01-01T00:00:00Z', rehash: true }),
  importEventsExample(['hostile', 'empty'], { kind: 'field', at: 1, field: 'createdAt', value: '2024-02-30T00:00:00Z', rehash: true }),
  importEventsExample(['hostile'], { kind: 'none' }, value({ onProgress: 1 })),
  importEventsExample(['hostile'], { kind: 'none' }, value(null)),
  // a conflicting envelope into a new session: refused, and no empty session left behind
  [
    {
      method: 'importTranscript',
      lines: build('[<a live message of realistic, changed>]', (c) => [
        JSON.stringify({ ...(c.live[1] as Message), payload: { role: 'user', content: 'changed' } }),
      ]),
      options: value({ sessionId: randomUUID() }),
    },
  ],
  [{ method: 'importTranscript', lines: value(['{"role":"user","content":"hi"}']), options: value(null) }],
  [
    {
      method: 'importTranscript',
      lines: value(['{"role":"user","content":"hi"}']),
      options: value({ tenantId: Symbol('tenant') }, '{ tenantId: <symbol> }'),
    },
  ],
]

// ---------------------------------------------------------------------------------------------------
// the properties

/** The import property on `store`: every generated import is stored exactly, or refused with nothing half-written. */
const assertImports = (store: PostgresStore, numRuns: number): Promise<void> =>
  fc.assert(
    fc.asyncProperty(importCallArb, (call) => runImport(store, call)),
    { numRuns, examples: IMPORT_EXAMPLES },
  )

describe('audit package: garbage against every call that takes user input', () => {
  it('audit, verifyChain, exportSessions: a well-formed answer or an input error code; never a write', async () => {
    await fc.assert(
      fc.asyncProperty(readCallArb, async (call) => {
        // given
        const ctx = newCtx()
        const args = call.args.map((b) => b(ctx))
        const before = await snapshot(source)
        // when
        const outcome = await settle(30_000, call.method, () => invokeRead(call, args))
        // then
        checkNoPollution()
        if (outcome.ok) {
          tally.count(`${call.method} ok`)
          await checkRead(call, args, outcome.value, ctx)
        } else {
          tally.checkRejection(call.method, outcome.error)
        }
        expect(await snapshot(source)).toBe(before)
      }),
      { numRuns: Number(process.env['TURNLOG_AUDIT_BAD_INPUT_RUNS'] ?? 300), examples: READ_EXAMPLES },
    )
  }, 120_000)

  it('importEvents, importTranscript (Postgres): stored exactly, or refused with an input error code and nothing half-written', async () => {
    // the files come from an export with a scrubbed payload (payloadDigest) and a fork's copy of one (data.redacted)
    expect(reference.filter((l) => l.includes('"payloadDigest":')).length).toBeGreaterThan(0)
    expect(reference.filter((l) => l.includes('"redacted":true')).length).toBeGreaterThan(0)
    await assertImports(target, Number(process.env['TURNLOG_AUDIT_IMPORT_RUNS'] ?? 300))
  }, 120_000)

  it('the imports on PGlite: the same, a smaller run', async () => {
    const pglite = await openTestStore('pglite')
    try {
      await assertImports(pglite.store, 80)
    } finally {
      await pglite.close()
    }
  }, 120_000)
})

/** Every runtime export of `@turnlog/audit` and how the garbage property calls it. */
export const AUDIT_EXPORTS = {
  AUDIT_CHECKS: VALUE_EXPORT,
  EXPORT_FORMAT: VALUE_EXPORT,
  EXPORT_VERSION: VALUE_EXPORT,
  FINDING_KINDS: VALUE_EXPORT,
  SEVERITIES: VALUE_EXPORT,
  audit: functionExport(3),
  countFindings: functionExport(1),
  exitCodeFor: functionExport(2),
  exportSessions: functionExport(3),
  importEvents: functionExport(3),
  importTranscript: functionExport(3),
  renderFindingLine: functionExport(1),
  renderReportText: functionExport(1),
  severityAtLeast: functionExport(2),
  transcriptMessageId: functionExport(3),
  verifyChain: functionExport(2),
  verifyExport: functionExport(1),
} as const satisfies Record<keyof typeof auditPackage, ExportSpec>

/**
 * The package's exports as the garbage property calls them: async generators (exportSessions,
 * numberedLines) do their work when iterated, so they are drained.
 */
const drainedAuditPackage = Object.fromEntries(
  Object.entries(auditPackage).map(([name, value]) =>
    name === 'exportSessions' || name === 'numberedLines'
      ? [
          name,
          async (...args: unknown[]) => {
            for await (const _ of (value as (...a: unknown[]) => AsyncIterable<unknown>)(...args)) void _
          },
        ]
      : [name, value],
  ),
)

describe('every export of @turnlog/audit, called with garbage (issue 13.11)', () => {
  it('regression: verifyChain(notAStore, id) and audit(notAStore, …) are INVALID_INPUT, not TypeErrors', async () => {
    const sid = randomUUID()
    for (const notAStore of [null, {}, { load: 1 }, Object.create(null)]) {
      expect(await outcomeCode(() => verifyChain(notAStore as never, sid))).toBe('INVALID_INPUT')
      expect(await outcomeCode(() => audit(notAStore as never, sid))).toBe('INVALID_INPUT')
    }
  })

  it('each function returns or throws a TurnlogError with a registry code (never a raw TypeError); the table covers every export', async () => {
    await expectEveryExportRejectsGarbage(drainedAuditPackage, AUDIT_EXPORTS, { numRuns: 60 })
  }, 180_000)
})
