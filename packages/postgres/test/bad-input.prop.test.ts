/**
 * Garbage in, typed errors out. fast-check throws generated garbage (wrong types, huge nesting,
 * invalid ids, lone surrogates, SQL-looking strings, prototype-pollution keys, exotic objects, large
 * strings) at every public call of the store, mixed with valid values so that garbage reaches every
 * layer. Each call must either store its input losslessly (read back and compared) or reject it with a
 * TurnlogError whose code is an input-error code of the registry: never a raw driver error, never a
 * crash or a hang, never `DB_ERROR` (garbage that reached the database), and never a partial write
 * (the database is unchanged after a rejection). Runs on Postgres, and a smaller run on embedded PGlite.
 *
 * Covered: the 16 calls of the SessionStore port, plus `redact`, `oldestOpenTransaction`,
 * `withTransaction(trx)` (with a real transaction, the store's own Kysely, look-alikes and garbage), the
 * optional capabilities `importSessions` (one session per source: each session is all or nothing) and
 * `atomically`, and the lookups `findSessionIds` and `countConflicts` in the same property; `subscribe(config, handler, options)` in a property of its own (refused
 * synchronously with `INVALID_INPUT` and no checkpoint row, or a consumer that catches up with a stored
 * checkpoint equal to its own, fails with a registry code, or stops when asked).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { sql } from 'kysely'
import {
  ERROR_CODES,
  EVENT_TYPES,
  GENESIS_HASH,
  TurnlogError,
  contentHash,
  createMessage,
  eventChainHash,
  isRedactedPayload,
  isTurnlogError,
  toFrozenJson,
  toMessage,
  type ErrorCode,
  type ImportedSession,
  type Message,
  type MessageId,
  type SessionId,
  type StoredEvent,
} from '@turnlog/core'
import * as postgres from '@turnlog/postgres'
import { openStore, withRetry, type Checkpoint, type PostgresStore, type SubscribedEvent, type Subscription } from '@turnlog/postgres'
import {
  buildKit,
  chatPayloadArb,
  createTestDatabase,
  createdAtArb,
  deepArb,
  expectEveryExportRejectsGarbage,
  garbageArb,
  hostileValueArb,
  openTestStore,
  invalidIdArb,
  jsonValueArb,
  messageArb,
  preview,
  protoArb,
  safeTextArb,
  settle,
  sqlArb,
  storeSnapshot,
  toolCallIdArb,
  type OpenedTestStore,
  weirdStringArb,
  type Build as KitBuild,
  VALUE_EXPORT,
  classExport,
  functionExport,
  type ExportSpec,
  type TestDatabase,
} from '@turnlog/testing'

/** The codes a call may answer bad input with. Anything else (DB_ERROR above all) is a finding. */
const INPUT_CODES: readonly ErrorCode[] = [
  'INVALID_MESSAGE',
  'INVALID_INPUT',
  'MESSAGE_TOO_LARGE',
  'BATCH_TOO_LARGE',
  'MESSAGE_CONFLICT',
  'VERSION_CONFLICT',
  'SESSION_NOT_FOUND',
  'SESSION_EXISTS',
  'UNKNOWN_MESSAGE',
  // importSessions: a malformed record of the source, named by its line
  'IMPORT_FAILED',
]

/**
 * Every public call of the store (close() aside; subscribe has a property of its own below).
 * `withTransaction` is called as `withTransaction(trx).append(session, messages, options)`.
 */
type Method =
  | 'createSession'
  | 'getSession'
  | 'append'
  | 'flush'
  | 'sync'
  | 'load'
  | 'events'
  | 'sessions'
  | 'rewind'
  | 'compact'
  | 'revise'
  | 'finalize'
  | 'fork'
  | 'rebuild'
  | 'transcript'
  | 'state'
  | 'conflicts'
  | 'redact'
  | 'oldestOpenTransaction'
  | 'withTransaction'
  | 'importSessions'
  | 'atomically'
  | 'findSessionIds'
  | 'countConflicts'

/** What a generated call can refer to: resolved against the database right before the call. */
interface Ctx {
  readonly session: SessionId
  /** Another session, with messages of its own. */
  readonly other: SessionId
  readonly live: readonly Message[]
  /** A live partial message of `session`. */
  readonly partial: Message
  /** A live message of `other`. */
  readonly foreign: Message
  /** A valid UUID that names nothing. */
  readonly missing: string
}

/** A value built at call time, printable in fast-check's counterexamples. */
type Build<T = unknown> = KitBuild<Ctx, T>

const { build, lit, mostly, maybeUndefined, value, objectOf, listOf } = buildKit<Ctx>()

// ---------------------------------------------------------------------------------------------------
// arguments

const sessionArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 6, arbitrary: fc.constant(build('<session>', (c) => c.session)) },
  { weight: 1, arbitrary: fc.constant(build('<session upper-case>', (c) => c.session.toUpperCase())) },
  { weight: 1, arbitrary: fc.constant(build('<other session>', (c) => c.other)) },
  { weight: 1, arbitrary: fc.constant(build('<missing>', (c) => c.missing)) },
  { weight: 2, arbitrary: lit(invalidIdArb) },
  { weight: 2, arbitrary: lit(garbageArb) },
)

const liveIdArb: fc.Arbitrary<Build> = fc.nat(5).map((i) => build(`<live[${i}].id>`, (c) => (c.live[i % c.live.length] as Message).id))

const messageIdArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 5, arbitrary: liveIdArb },
  { weight: 1, arbitrary: fc.constant(build('<partial.id>', (c) => c.partial.id)) },
  { weight: 1, arbitrary: fc.constant(build('<foreign.id>', (c) => c.foreign.id)) },
  { weight: 1, arbitrary: fc.constant(build('<missing>', (c) => c.missing)) },
  { weight: 2, arbitrary: lit(invalidIdArb) },
  { weight: 2, arbitrary: lit(garbageArb) },
)

const payloadLikeArb = fc.record(
  {
    role: fc.oneof(fc.constantFrom('system', 'developer', 'user', 'assistant', 'tool'), garbageArb),
    content: fc.oneof(weirdStringArb, sqlArb, garbageArb),
    tool_calls: fc.oneof(
      garbageArb,
      fc.array(
        fc.record({
          id: fc.oneof(toolCallIdArb, garbageArb),
          type: fc.constant('function'),
          function: fc.oneof(fc.record({ name: fc.string(), arguments: fc.oneof(fc.string(), garbageArb) }), garbageArb),
        }),
        { maxLength: 2 },
      ),
    ),
    tool_call_id: fc.oneof(toolCallIdArb, garbageArb),
    name: fc.oneof(weirdStringArb, garbageArb),
    extra: garbageArb,
  },
  { requiredKeys: ['role'] },
)

const payloadArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 3, arbitrary: lit(chatPayloadArb) },
  { weight: 3, arbitrary: lit(payloadLikeArb) },
  { weight: 1, arbitrary: lit(sqlArb.map((content) => ({ role: 'user', content }))) },
  { weight: 1, arbitrary: lit(protoArb) },
  { weight: 1, arbitrary: lit(deepArb.map((content) => ({ role: 'user', content: 'x', deep: content }))) },
  { weight: 1, arbitrary: lit(garbageArb) },
)

const messageLikeArb = fc.record(
  {
    id: fc.oneof(fc.uuid(), invalidIdArb, garbageArb),
    payload: payloadArg.map((b) => b({} as Ctx)),
    createdAt: fc.oneof(createdAtArb, garbageArb),
    ephemeral: fc.oneof(fc.boolean(), garbageArb),
    status: fc.oneof(fc.constant('partial'), garbageArb),
    externalId: fc.oneof(weirdStringArb, garbageArb),
  },
  { requiredKeys: [] },
)

const messageArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 4, arbitrary: lit(messageArb) },
  { weight: 3, arbitrary: lit(messageLikeArb) },
  { weight: 1, arbitrary: fc.nat(5).map((i) => build(`<copy of live[${i}]>`, (c) => ({ ...(c.live[i % c.live.length] as Message) }))) },
  {
    weight: 1,
    arbitrary: fc
      .nat(5)
      .map((i) =>
        build(`<live[${i}].id with other content>`, (c) =>
          createMessage({ role: 'user', content: `changed ${randomUUID()}` }, { id: (c.live[i % c.live.length] as Message).id }),
        ),
      ),
  },
  { weight: 1, arbitrary: fc.constant(build('<foreign message>', (c) => c.foreign)) },
  { weight: 1, arbitrary: lit(garbageArb) },
)

/** Stand-ins `invoke` replaces: a real transaction of the store, and the store's own (non-transaction) Kysely. */
const REAL_TRX = Object.freeze({ stand_in: 'a transaction of store.db' })
const ROOT_KYSELY = Object.freeze({ stand_in: 'store.db itself (not a transaction)' })

const trxArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 4, arbitrary: fc.constant(build('<transaction>', () => REAL_TRX)) },
  { weight: 1, arbitrary: fc.constant(build('<store.db, not a transaction>', () => ROOT_KYSELY)) },
  {
    weight: 1,
    arbitrary: lit(fc.constantFrom<unknown>({ isTransaction: true }, { isTransaction: true, getExecutor: 1 }, { transaction: () => ({}) })),
  },
  { weight: 2, arbitrary: lit(garbageArb) },
)

/** A one-event session to import, its chain link right; `damage` replaces one field of it (or of its event) with garbage. */
const importedSessionArb: fc.Arbitrary<Build> = fc
  .tuple(
    chatPayloadArb,
    createdAtArb,
    fc.option(
      fc.tuple(
        fc.constantFrom(
          'id',
          'tenantId',
          'metadata',
          'createdAt',
          'parent',
          'events',
          'line',
          'event.seq',
          'event.eventId',
          'event.type',
          'event.messageId',
          'event.contentHash',
          'event.payload',
          'event.data',
          'event.recordedAt',
          'event.hash',
          'event.payloadDigest',
          'event.line',
        ),
        garbageArb,
      ),
      { nil: undefined, freq: 2 },
    ),
    fc.option(safeTextArb, { nil: null }),
  )
  .map(([payload, createdAt, damage, tenantId]) =>
    build(`<one-event session${damage === undefined ? '' : `, ${damage[0]} = ${preview(damage[1])}`}>`, () => {
      const id = randomUUID()
      const messageId = randomUUID()
      const event: Record<string, unknown> = {
        seq: 1,
        eventId: randomUUID(),
        type: 'message_appended',
        messageId,
        contentHash: contentHash(payload),
        payload,
        data: { createdAt },
        recordedAt: createdAt,
        line: 2,
      }
      event['hash'] = eventChainHash(GENESIS_HASH, {
        ...(event as {
          seq: number
          eventId: string
          type: string
          messageId: string
          contentHash: string
          payload: unknown
          data: unknown
        }),
        sessionId: id,
      })
      const session: Record<string, unknown> = {
        id,
        tenantId,
        metadata: null,
        createdAt,
        updatedAt: createdAt,
        parent: null,
        events: [event],
        line: 1,
      }
      if (damage !== undefined) {
        const [field, value] = damage
        if (field.startsWith('event.')) event[field.slice(6)] = value
        else session[field] = value
      }
      return session
    }),
  )

const importSourceArg: fc.Arbitrary<Build> = fc.oneof(
  { weight: 3, arbitrary: importedSessionArb.map((b) => build(`[${b[fc.toStringMethod]()}]`, (c) => [b(c)])) },
  {
    weight: 1,
    arbitrary: importedSessionArb.map((b) =>
      build(`<async [${b[fc.toStringMethod]()}]>`, (c) =>
        (async function* () {
          yield b(c)
        })(),
      ),
    ),
  },
  { weight: 1, arbitrary: lit(fc.array(garbageArb, { maxLength: 1 })) },
  { weight: 1, arbitrary: lit(garbageArb) },
)

/** True for the work {@link workArg} builds (a function carrying the `session` and `messages` it appends), not garbage. */
function isAppendWork(work: unknown): work is { session: string; messages: Message[] } {
  return typeof work === 'function' && typeof (work as { session?: unknown }).session === 'string'
}

/** `atomically`'s work: appends to the session, then (sometimes) throws; or garbage. */
const workArg: fc.Arbitrary<Build> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.tuple(fc.array(messageArb, { minLength: 1, maxLength: 3 }), fc.boolean()).map(([messages, fails]) =>
      build(`<store => store.append(session, ${messages.length} message(s))${fails ? ', then throw' : ''}>`, (c) =>
        Object.assign(
          async (s: PostgresStore) => {
            const result = await s.append(c.session, messages)
            if (fails) throw new TurnlogError('INVALID_INPUT', 'the work gave up after its append')
            return result
          },
          { session: c.session, messages },
        ),
      ),
    ),
  },
  { weight: 1, arbitrary: lit(garbageArb) },
)

const versionArg = mostly(lit(fc.nat(40)))
const writeOptionsArg = maybeUndefined(mostly(objectOf({ expectedVersion: versionArg })))
const syncOptionsArg = maybeUndefined(
  mostly(
    objectOf({
      expectedVersion: versionArg,
      compaction: mostly(objectOf({ summaryIds: mostly(listOf(messageIdArg)), reason: mostly(lit(weirdStringArb)) })),
    }),
  ),
)

/** A generated call of the store. */
interface Call {
  readonly method: Method
  readonly args: Build[]
}

/** A call of `method` with one argument drawn from each of `args`. */
const callOf = (method: Method, ...args: fc.Arbitrary<Build>[]): fc.Arbitrary<Call> =>
  fc.tuple(...args).map((drawn) => ({ method, args: drawn }))

const garbageCallArb: fc.Arbitrary<Call> = fc.oneof(
  {
    weight: 2,
    arbitrary: callOf(
      'createSession',
      maybeUndefined(
        mostly(objectOf({ id: mostly(lit(fc.uuid())), tenantId: mostly(lit(weirdStringArb)), metadata: mostly(lit(jsonValueArb)) })),
      ),
    ),
  },
  { weight: 2, arbitrary: callOf('getSession', sessionArg) },
  {
    weight: 4,
    arbitrary: callOf('append', sessionArg, mostly(listOf(messageArg)), writeOptionsArg),
  },
  {
    weight: 4,
    arbitrary: callOf('flush', sessionArg, mostly(listOf(messageArg)), writeOptionsArg),
  },
  {
    weight: 2,
    arbitrary: callOf('sync', sessionArg, mostly(listOf(messageArg)), syncOptionsArg),
  },
  {
    weight: 2,
    arbitrary: callOf('load', sessionArg, maybeUndefined(mostly(objectOf({ at: versionArg })))),
  },
  {
    weight: 2,
    arbitrary: callOf('events', sessionArg, maybeUndefined(mostly(objectOf({ fromSeq: versionArg, toSeq: versionArg })))),
  },
  {
    weight: 2,
    arbitrary: callOf(
      'sessions',
      maybeUndefined(
        mostly(
          objectOf({
            tenantId: mostly(lit(weirdStringArb)),
            limit: mostly(lit(fc.integer({ min: -5, max: 1200 }))),
            after: mostly(lit(fc.uuid())),
          }),
        ),
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: callOf(
      'rewind',
      sessionArg,
      mostly(
        fc.oneof(
          objectOf({ after: messageIdArg }),
          objectOf({ from: messageIdArg }),
          objectOf({ after: messageIdArg, from: messageIdArg }),
        ),
      ),
      maybeUndefined(mostly(objectOf({ expectedVersion: versionArg, reason: mostly(lit(weirdStringArb)) }))),
    ),
  },
  {
    weight: 3,
    arbitrary: callOf(
      'compact',
      sessionArg,
      mostly(
        objectOf({
          covered: mostly(listOf(messageIdArg)),
          summary: mostly(fc.oneof(messageArg, listOf(messageArg))),
          reason: mostly(lit(weirdStringArb)),
          metadata: mostly(lit(jsonValueArb)),
          expectedVersion: versionArg,
        }),
      ),
    ),
  },
  {
    weight: 3,
    arbitrary: callOf(
      'revise',
      sessionArg,
      messageIdArg,
      payloadArg,
      maybeUndefined(mostly(objectOf({ status: mostly(lit(fc.constantFrom('partial', 'final'))), expectedVersion: versionArg }))),
    ),
  },
  {
    weight: 3,
    arbitrary: callOf('finalize', sessionArg, messageIdArg, maybeUndefined(payloadArg), writeOptionsArg),
  },
  {
    weight: 3,
    arbitrary: callOf(
      'fork',
      sessionArg,
      mostly(
        objectOf({
          at: messageIdArg,
          id: mostly(lit(fc.uuid())),
          tenantId: mostly(lit(weirdStringArb)),
          metadata: mostly(lit(jsonValueArb)),
        }),
      ),
    ),
  },
  {
    weight: 1,
    arbitrary: callOf(
      'rebuild',
      maybeUndefined(
        mostly(objectOf({ sessionId: sessionArg, verify: mostly(lit(fc.boolean())), onProgress: mostly(lit(fc.constant(() => {}))) })),
      ),
    ),
  },
  { weight: 1, arbitrary: callOf('transcript', sessionArg) },
  {
    weight: 1,
    arbitrary: callOf('state', sessionArg, maybeUndefined(mostly(objectOf({ at: versionArg })))),
  },
  { weight: 1, arbitrary: callOf('conflicts', sessionArg) },
  {
    weight: 3,
    arbitrary: callOf('redact', sessionArg, messageIdArg, maybeUndefined(mostly(objectOf({ reason: mostly(lit(weirdStringArb)) })))),
  },
  {
    weight: 1,
    arbitrary: callOf(
      'oldestOpenTransaction',
      maybeUndefined(mostly(objectOf({ scope: mostly(lit(fc.constantFrom('cluster', 'database'))) }))),
    ),
  },
  {
    weight: 3,
    arbitrary: callOf('withTransaction', trxArg, sessionArg, mostly(listOf(messageArg)), writeOptionsArg),
  },
  {
    weight: 3,
    arbitrary: callOf(
      'importSessions',
      importSourceArg,
      maybeUndefined(mostly(objectOf({ onSession: mostly(lit(fc.constant(() => {}))) }))),
    ),
  },
  { weight: 2, arbitrary: callOf('atomically', workArg) },
  {
    weight: 1,
    arbitrary: callOf(
      'findSessionIds',
      mostly(fc.oneof(lit(fc.stringMatching(/^[0-9a-fA-F-]{1,12}$/)), fc.constant(build('<session suffix>', (c) => c.session.slice(-8))))),
      maybeUndefined(mostly(objectOf({ limit: mostly(lit(fc.integer({ min: -5, max: 1200 }))) }))),
    ),
  },
  { weight: 1, arbitrary: callOf('countConflicts') },
)

/**
 * Calls whose arguments are valid but hostile (weird strings, lone surrogates, NUL, `__proto__` keys,
 * SQL text, unknown provider fields), so that the "stored losslessly" branch runs often.
 */
const hostileCallArb: fc.Arbitrary<Call> = fc.oneof(
  callOf('append', fc.constant(build('<session>', (c) => c.session)), lit(fc.array(messageArb, { minLength: 1, maxLength: 4 }))),
  callOf(
    'flush',
    fc.constant(build('<session>', (c) => c.session)),
    fc.array(messageArb, { minLength: 1, maxLength: 4 }).map((ms) => build(`[...live, ${ms.length} new]`, (c) => [...c.live, ...ms])),
  ),
  callOf(
    'sync',
    fc.constant(build('<session>', (c) => c.session)),
    fc.array(messageArb, { minLength: 1, maxLength: 4 }).map((ms) => build(`[...live, ${ms.length} new]`, (c) => [...c.live, ...ms])),
  ),
  callOf('revise', fc.constant(build('<session>', (c) => c.session)), liveIdArb, lit(chatPayloadArb)),
  callOf(
    'compact',
    fc.constant(build('<session>', (c) => c.session)),
    fc.tuple(fc.integer({ min: 1, max: 3 }), messageArb, safeTextArb, fc.jsonValue({ maxDepth: 3 })).map(([n, summary, reason, metadata]) =>
      build(`{ covered: live[0..${n}], summary, reason, metadata }`, (c) => ({
        covered: c.live.slice(0, n).map((m) => m.id),
        summary,
        reason,
        metadata,
      })),
    ),
  ),
  callOf(
    'fork',
    fc.constant(build('<session>', (c) => c.session)),
    fc.tuple(fc.nat(5), jsonValueArb).map(([i, metadata]) =>
      build(`{ at: live[${i}], id: <new>, metadata }`, (c) => ({
        at: (c.live[i % c.live.length] as Message).id,
        id: randomUUID(),
        metadata,
      })),
    ),
  ),
  callOf('createSession', lit(fc.record({ id: fc.uuid(), tenantId: safeTextArb, metadata: jsonValueArb }, { requiredKeys: ['id'] }))),
  callOf(
    'rewind',
    fc.constant(build('<session>', (c) => c.session)),
    fc.nat(5).map((i) => build(`{ after: live[${i}] }`, (c) => ({ after: (c.live[i % c.live.length] as Message).id }))),
    lit(fc.record({ reason: safeTextArb })),
  ),
  callOf(
    'redact',
    fc.constant(build('<session>', (c) => c.session)),
    liveIdArb,
    lit(fc.record({ reason: safeTextArb }, { requiredKeys: [] })),
  ),
  callOf(
    'withTransaction',
    fc.constant(build('<transaction>', () => REAL_TRX)),
    fc.constant(build('<session>', (c) => c.session)),
    lit(fc.array(messageArb, { minLength: 1, maxLength: 3 })),
  ),
)

const callArb = fc.oneof({ weight: 3, arbitrary: garbageCallArb }, { weight: 1, arbitrary: hostileCallArb })

// ---------------------------------------------------------------------------------------------------
// the harness

/** Everything the database holds that a call may write, as one string (conflict evidence excluded: it is written on purpose). */
const snapshot = (store: PostgresStore): Promise<string> => storeSnapshot(store, false)

const user = (content: string, options: { status?: 'partial' } = {}): Message => createMessage({ role: 'user', content }, options)

/** The fixture a run refers to: its session gets topped up so refs always resolve. */
async function fixture(store: PostgresStore, session: SessionId, other: SessionId, foreign: Message): Promise<Ctx> {
  let live = (await store.load(session)).messages
  if (live.length < 3) {
    await store.append(session, [user('q'), user('a'), user('q')])
    live = (await store.load(session)).messages
  }
  let partial = live.find((m) => m.status === 'partial')
  if (!partial) {
    partial = createMessage({ role: 'assistant', content: 'streaming…' }, { status: 'partial' })
    await store.append(session, [partial])
    live = (await store.load(session)).messages
  }
  return { session, other, live, partial, foreign, missing: randomUUID() }
}

const storedText = (m: Message): string => JSON.stringify(m.payload)

/** After a successful call, reads back what it wrote and compares it with what was given. */
async function checkLossless(store: PostgresStore, method: Method, args: unknown[], result: unknown, created: boolean): Promise<void> {
  const byId = async (session: string): Promise<Map<string, Message>> =>
    new Map((await store.load(session)).messages.map((m) => [m.id as string, m]))
  if (method === 'withTransaction') {
    // the transaction committed: what its append wrote reads back like a plain append's
    await checkLossless(store, 'append', args.slice(1), result, created)
  } else if (method === 'atomically') {
    // the work resolved: its append committed and reads back like a plain append's (garbage work that
    // resolved wrote nothing: the property compares the snapshots for it)
    const work = args[0] as { session: string; messages: Message[] }
    if (!isAppendWork(work)) return
    await checkLossless(store, 'append', [work.session, work.messages], result, created)
  } else if (method === 'importSessions') {
    // every session of the source is stored with its events exactly (ids, texts, links)
    const source = args[0] as ImportedSession[] | AsyncIterable<ImportedSession>
    const given = Array.isArray(source) ? source : []
    const { sessionIds, eventsWritten } = result as { sessionIds: string[]; eventsWritten: number }
    if (given.length > 0) expect(sessionIds).toEqual(given.map((s) => s.id))
    for (const s of given) {
      const events: StoredEvent[] = []
      for await (const e of store.events(s.id)) events.push(e)
      expect(events.map((e) => [e.seq, e.eventId, e.messageId, e.contentHash, JSON.stringify(e.payload), e.hash])).toEqual(
        s.events.map((e) => [e.seq, e.eventId, e.messageId, e.contentHash, JSON.stringify(e.payload), e.hash]),
      )
    }
    if (given.length > 0) expect(eventsWritten).toBe(given.reduce((n, s) => n + s.events.length, 0))
  } else if (method === 'findSessionIds') {
    const fragment = String(args[0]).toLowerCase()
    for (const id of result as string[]) expect(id.startsWith(fragment) || id.endsWith(fragment)).toBe(true)
  } else if (method === 'countConflicts') {
    expect(Number.isSafeInteger(result) && (result as number) >= 0).toBe(true)
  } else if (method === 'redact') {
    const session = String(args[0]).toLowerCase()
    const messageId = String(args[1]).toLowerCase()
    const { version, sessions } = result as { version: number; sessions: { sessionId: string; version: number; scrubbed: number }[] }
    expect(version).toBe((await store.getSession(session)).version)
    expect(sessions.map((s) => s.sessionId)).toContain(session)
    const events: StoredEvent[] = []
    for await (const e of store.events(session)) events.push(e)
    // every content event of the message is scrubbed to the placeholder; the reason is recorded as given
    for (const e of events.filter((x) => x.messageId === messageId && x.contentHash !== null)) {
      expect(isRedactedPayload(e.payload)).toBe(true)
    }
    const record = events.filter((e) => e.type === 'message_redacted' && e.messageId === messageId).at(-1)
    expect(record).toBeDefined()
    const reason = (args[2] as { reason?: string } | undefined)?.reason
    if ((sessions.find((s) => s.sessionId === session)?.scrubbed ?? 0) > 0)
      expect((record?.data as { reason?: unknown }).reason).toBe(reason)
  } else if (method === 'oldestOpenTransaction') {
    if (result !== null) {
      const r = result as Record<string, unknown>
      expect(Object.keys(r).sort()).toEqual(['ageMs', 'applicationName', 'database', 'pid', 'query', 'state', 'xid'])
      expect(Number.isSafeInteger(r['ageMs']) && (r['ageMs'] as number) >= 0).toBe(true)
      expect(r['xid']).toMatch(/^[0-9]+$/)
      for (const k of ['pid', 'state', 'query', 'database', 'applicationName'])
        expect(['object', 'string', 'number']).toContain(typeof r[k])
    }
  } else if (method === 'append' || method === 'flush' || method === 'sync') {
    const session = String(args[0]).toLowerCase()
    const live = await byId(session)
    const given = (args[1] as unknown[]).map((v) => toMessage(v)).filter((m) => m.ephemeral !== true)
    for (const id of (result as { appended: string[] }).appended) {
      const sent = given.find((m) => m.id === id)
      const stored = live.get(id)
      expect(sent).toBeDefined()
      expect(stored && storedText(stored)).toBe(sent && storedText(sent))
      expect(stored?.createdAt).toBe(sent?.createdAt)
      expect(stored?.externalId).toBe(sent?.externalId)
      expect(stored?.status).toBe(sent?.status)
    }
  } else if (method === 'revise' || (method === 'finalize' && args[2] !== undefined)) {
    const stored = (await byId(String(args[0]).toLowerCase())).get(String(args[1]).toLowerCase())
    expect(stored && storedText(stored)).toBe(JSON.stringify(toFrozenJson(args[2])))
  } else if (method === 'compact') {
    const input = args[1] as { summary: unknown }
    const live = await byId(String(args[0]).toLowerCase())
    for (const s of (Array.isArray(input.summary) ? input.summary : [input.summary]).map((v) => toMessage(v))) {
      const stored = live.get(s.id)
      expect(stored && storedText(stored)).toBe(storedText(s))
    }
  } else if (method === 'createSession' && created) {
    const options = (args[0] ?? {}) as { tenantId?: string; metadata?: unknown }
    const info = await store.getSession(result as string)
    expect(info.tenantId).toBe(options.tenantId ?? null)
    expect(JSON.stringify(info.metadata)).toBe(JSON.stringify(options.metadata === undefined ? null : toFrozenJson(options.metadata)))
  } else if (method === 'fork') {
    const info = await store.getSession(result as string)
    expect(info.parent?.sessionId).toBe(String(args[0]).toLowerCase())
  }
}

async function invoke(store: PostgresStore, method: Method, args: unknown[]): Promise<unknown> {
  if (method === 'withTransaction') {
    const [trx, ...rest] = args as [unknown, ...Parameters<PostgresStore['append']>]
    // a rejection inside the transaction rolls all of it back
    if (trx === REAL_TRX) return await store.db.transaction().execute((t) => store.withTransaction(t).append(...rest))
    return await store.withTransaction((trx === ROOT_KYSELY ? store.db : trx) as never).append(...rest)
  }
  const fn = (store as unknown as Record<Method, (...a: unknown[]) => unknown>)[method]
  const value = fn.apply(store, args)
  if (method === 'events') {
    const out: unknown[] = []
    for await (const e of value as AsyncIterable<unknown>) out.push(e)
    return out
  }
  return await value
}

/** Fails (instead of hanging the file until jest's timeout) when a call does not settle in time. */
async function within<T>(ms: number, what: string, work: Promise<T>): Promise<T> {
  const outcome = await settle(ms, what, () => work)
  if (!outcome.ok) throw outcome.error
  return outcome.value
}

const tally = new Map<string, number>()

/** Cases every run includes (fast-check `examples`): rare draws that once escaped as raw or DB errors. */
const SESSION = build('<session>', (c) => c.session)
const LIVE0 = build('<live[0].id>', (c) => (c.live[0] as Message).id)
const EXAMPLES: [Call][] = [
  [{ method: 'oldestOpenTransaction', args: [value(null)] }],
  [{ method: 'oldestOpenTransaction', args: [value({ scope: 'everywhere' })] }],
  [{ method: 'oldestOpenTransaction', args: [value({ scope: 'database' })] }],
  [{ method: 'withTransaction', args: [build('<store.db, not a transaction>', () => ROOT_KYSELY), SESSION, value([user('x')])] }],
  [{ method: 'withTransaction', args: [value({ isTransaction: true }), SESSION, value([user('x')])] }],
  [{ method: 'withTransaction', args: [value(Number.NaN), SESSION, value([])] }],
  [{ method: 'redact', args: [SESSION, LIVE0, value(null)] }],
  [{ method: 'redact', args: [SESSION, LIVE0, value({ reason: 'nul \u0000' })] }],
  [{ method: 'redact', args: [SESSION, LIVE0, value({ reason: Object.create(null) as unknown })] }],
  // a garbage function as atomically's work: it runs, resolves and writes nothing (CI, seed -484763199)
  [{ method: 'atomically', args: [value(() => 'fn')] }],
]

/** A store on the Postgres database at `url`, as {@link openTestStore} hands one out. */
async function onPostgres(url: string): Promise<Pick<OpenedTestStore, 'store' | 'close'>> {
  const store = await openStore({ connectionString: url })
  return { store, close: () => store.close() }
}

function runProperty(open: () => Promise<Pick<OpenedTestStore, 'store' | 'close'>>, numRuns: number): () => Promise<void> {
  return async () => {
    const { store, close } = await open()
    try {
      const session = await store.createSession()
      const other = await store.createSession()
      const foreign = user('a message of another session')
      await store.append(other, [user('o1'), foreign])
      await fc.assert(
        fc.asyncProperty(callArb, async ({ method, args: builds }) => {
          // given
          const ctx = await fixture(store, session, other, foreign)
          const args = builds.map((b) => b(ctx))
          const before = await snapshot(store)
          // when
          const outcome = await settle(20_000, method, () => invoke(store, method, args))
          const result = outcome.ok ? outcome.value : undefined
          const error = outcome.ok ? undefined : outcome.error
          // then
          expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
          expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
          if (error === undefined) {
            tally.set(`${method} ok`, (tally.get(`${method} ok`) ?? 0) + 1)
            const after = await snapshot(store)
            const created = method === 'createSession' && before.split('|')[2] !== after.split('|')[2]
            // garbage work atomically ran and that resolved (a function the garbage held) wrote nothing
            if (method === 'atomically' && !isAppendWork(args[0])) expect(after).toBe(before)
            await checkLossless(store, method, args, result, created)
            return
          }
          if (!isTurnlogError(error)) throw new Error(`${method} threw a raw ${String(error)}`, { cause: error })
          const key = `${method} ${error.code}`
          tally.set(key, (tally.get(key) ?? 0) + 1)
          expect(Object.hasOwn(ERROR_CODES, error.code)).toBe(true)
          if (!INPUT_CODES.includes(error.code))
            throw new Error(`${method} answered bad input with ${error.code}: ${error.message}`, { cause: error })
          expect(await snapshot(store)).toBe(before)
        }),
        { numRuns, examples: EXAMPLES },
      )
    } finally {
      await close()
    }
  }
}

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase({ migrated: true })
})

afterAll(async () => {
  await db?.drop()
  const summary = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}: ${n}`)
  console.log(`bad-input outcomes (method result: count)\n  ${summary.join('\n  ')}`)
})

describe('garbage against every public call', () => {
  it(
    'Postgres: stored losslessly or refused with an input error code, never a partial write',
    runProperty(() => onPostgres(db.connectionString), Number(process.env['TURNLOG_BAD_INPUT_RUNS'] ?? 400)),
    120_000,
  )

  it(
    'PGlite: the same, a smaller run',
    runProperty(() => openTestStore('pglite'), 100),
    120_000,
  )
})

// ---------------------------------------------------------------------------------------------------
// subscribe: a synchronous call that validates, then a consumer that runs on its own

/** What a generated subscribe call can refer to. */
interface SubCtx {
  /** A name no consumer has used. */
  readonly fresh: string
  /** A name a consumer started before the run holds for the whole property. */
  readonly busy: string
  readonly session: SessionId
  readonly missing: string
  /** The key of the last event of the log. */
  readonly last: Checkpoint
  /** The store's connection string (Postgres), for `options.connectionString`. */
  readonly connectionString: string | undefined
  /** What the run's handler and callbacks saw. */
  readonly seen: { events: SubscribedEvent[]; errors: unknown[]; handlerCalls: number }
}

type SubBuild<T = unknown> = KitBuild<SubCtx, T>

const subKit = buildKit<SubCtx>()
const subBuild = subKit.build
const subLit = subKit.lit
const subMostly = (valid: fc.Arbitrary<SubBuild>, validWeight = 4): fc.Arbitrary<SubBuild> => subKit.mostly(valid, validWeight)
const subMaybe = subKit.maybeUndefined
const subObject = subKit.objectOf

const msArb = (max: number): fc.Arbitrary<SubBuild> =>
  fc.oneof(
    { weight: 5, arbitrary: subLit(fc.integer({ min: 1, max })) },
    { weight: 1, arbitrary: subLit(fc.constantFrom(0, -1, 1.5, 2 ** 31, 2 ** 53 - 1, 2 ** 53, Infinity)) },
  )

const subNameArg: fc.Arbitrary<SubBuild> = fc.oneof(
  { weight: 16, arbitrary: fc.constant(subBuild('<fresh name>', (c) => c.fresh)) },
  { weight: 1, arbitrary: fc.constant(subBuild('<busy name>', (c) => c.busy)) },
  { weight: 1, arbitrary: subLit(weirdStringArb) },
  { weight: 1, arbitrary: subLit(fc.constantFrom('', 'x'.repeat(201), 'x'.repeat(200), 'nul\u0000', 'lone\ud800')) },
  { weight: 1, arbitrary: subLit(garbageArb) },
)

const checkpointLikeArb = fc.record(
  {
    txId: fc.oneof(
      fc.bigInt({ min: 0n, max: 2n ** 66n }).map(String),
      fc.constantFrom('', '01', '-1', '1e3', ' 1', '18446744073709551616'),
      garbageArb,
    ),
    globalPosition: fc.oneof(fc.nat(), fc.constantFrom(-1, 1.5, NaN, 2 ** 53), garbageArb),
  },
  { requiredKeys: [] },
)

const subFromArg: fc.Arbitrary<SubBuild> = subMaybe(
  fc.oneof(
    { weight: 6, arbitrary: subLit(fc.constantFrom('start', 'now')) },
    { weight: 2, arbitrary: fc.constant(subBuild('<checkpoint of the last event>', (c) => ({ ...c.last }))) },
    { weight: 1, arbitrary: subLit(fc.constant({ txId: '0', globalPosition: 0 })) },
    { weight: 1, arbitrary: subLit(checkpointLikeArb) },
    { weight: 1, arbitrary: subLit(garbageArb) },
  ),
)

const subFilterArg: fc.Arbitrary<SubBuild> = subMaybe(
  subMostly(
    subObject({
      types: subMostly(
        fc.oneof(
          { weight: 4, arbitrary: subLit(fc.subarray([...EVENT_TYPES], { minLength: 1 })) },
          { weight: 1, arbitrary: subLit(fc.array(fc.oneof(fc.constantFrom<unknown>(...EVENT_TYPES), garbageArb), { maxLength: 3 })) },
        ),
      ),
      sessionId: fc.oneof(
        { weight: 3, arbitrary: fc.constant(subBuild('<session>', (c) => c.session)) },
        { weight: 1, arbitrary: fc.constant(subBuild('<missing>', (c) => c.missing)) },
        { weight: 1, arbitrary: subLit(invalidIdArb) },
      ),
    }),
  ),
)

/** Handlers: one that collects, one that always throws, and garbage. */
const subHandlerArg: fc.Arbitrary<SubBuild> = fc.oneof(
  {
    weight: 8,
    arbitrary: fc.constant(
      subBuild('<collecting handler>', (c) => (e: SubscribedEvent) => {
        c.seen.handlerCalls++
        c.seen.events.push(e)
      }),
    ),
  },
  {
    weight: 1,
    arbitrary: fc
      .constantFrom<unknown>(new Error('handler refuses'), 'a string', undefined, null, Symbol('thrown'), Object.create(null), {
        message: 1,
      })
      .map((thrown) =>
        subBuild(
          `<handler throwing ${typeof thrown === 'symbol' ? 'a symbol' : thrown instanceof Error ? 'an Error' : typeof thrown === 'object' && thrown !== null && Object.getPrototypeOf(thrown) === null ? 'a null-prototype object' : fc.stringify(thrown)}>`,
          (c) => () => {
            c.seen.handlerCalls++
            throw thrown
          },
        ),
      ),
  },
  { weight: 2, arbitrary: subLit(garbageArb) },
)

const subOptionsArg: fc.Arbitrary<SubBuild> = subMaybe(
  subMostly(
    subObject({
      batchSize: subMostly(fc.oneof(subLit(fc.integer({ min: 1, max: 10_000 })), subLit(fc.constantFrom(0, 10_001, 1.5)))),
      maxAttempts: subMostly(subLit(fc.integer({ min: 1, max: 3 })), 12),
      backoff: subMostly(
        fc.oneof(
          subLit(
            fc.record(
              {
                initialDelayMs: fc.integer({ min: 1, max: 5 }),
                maxDelayMs: fc.integer({ min: 1, max: 10 }),
                factor: fc.oneof(fc.constantFrom(1, 2, 1.5), garbageArb),
              },
              { requiredKeys: [] },
            ),
          ),
          subLit(
            fc.constantFrom<unknown>(
              () => 0,
              () => 1,
              () => Infinity,
              () => NaN,
              () => -5,
              () => 'soon',
              () => Symbol('when'),
              () => {
                throw new Error('backoff refuses')
              },
            ),
          ),
        ),
      ),
      transactional: subMostly(subLit(fc.boolean()), 12),
      pollIntervalMs: subMostly(msArb(50), 12),
      heldBackPollIntervalMs: subMostly(msArb(50), 12),
      listen: subMostly(subLit(fc.boolean()), 12),
      waitForLock: subMostly(subLit(fc.boolean()), 12),
      lockRetryMs: subMostly(msArb(50), 12),
      reconnect: subMostly(subLit(fc.boolean()), 12),
      maxReconnectDelayMs: subMostly(msArb(100), 12),
      connectionString: fc.oneof(
        { weight: 8, arbitrary: fc.constant(subBuild('<the store connection string>', (c) => c.connectionString)) },
        { weight: 1, arbitrary: subLit(fc.oneof(sqlArb, weirdStringArb)) },
        { weight: 1, arbitrary: subLit(garbageArb) },
      ),
      onError: fc.oneof(
        {
          weight: 8,
          arbitrary: fc.constant(
            subBuild('<recording onError>', (c) => Object.assign((e: unknown) => void c.seen.errors.push(e), { recording: true })),
          ),
        },
        { weight: 1, arbitrary: subLit(garbageArb) },
      ),
      onStateChange: fc.oneof(
        { weight: 5, arbitrary: subLit(fc.constant(() => {})) },
        {
          weight: 2,
          arbitrary: subLit(
            fc.constant(() => {
              throw new Error('listener refuses')
            }),
          ),
        },
        { weight: 1, arbitrary: subLit(garbageArb) },
      ),
    }),
  ),
)

const subscribeCallArb = fc.tuple(
  subObject({ name: subNameArg, from: subFromArg, filter: subFilterArg }, ['name']),
  subHandlerArg,
  subOptionsArg,
)

/** How long a started consumer gets to catch up before it is stopped (it may wait for a busy name). */
const SUBSCRIPTION_DEADLINE_MS = 600

const subValue = subKit.value
const FRESH = subBuild('<fresh name>', (c) => c.fresh)
const COLLECT = subBuild('<collecting handler>', (c) => (e: SubscribedEvent) => {
  c.seen.handlerCalls++
  c.seen.events.push(e)
})
const throwing = (thrown: unknown, label: string): SubBuild =>
  subBuild(label, (c) => () => {
    c.seen.handlerCalls++
    throw thrown
  })
const configOf = subKit.record

/** Cases every subscribe run includes: each once escaped as a raw error, was silently ignored, or left a poisoned name. */
const SUBSCRIBE_EXAMPLES: [[SubBuild, SubBuild, SubBuild]][] = [
  [[configOf({ name: FRESH }), COLLECT, subValue(null)]],
  [
    [
      configOf({
        name: FRESH,
        from: subValue({ txId: Object.create(null) as unknown, globalPosition: 0 }, '{ txId: <null-prototype object> }'),
      }),
      COLLECT,
      subValue(undefined),
    ],
  ],
  [[configOf({ name: FRESH, filter: subValue({ types: [Symbol('type')] }, '{ types: [<symbol>] }') }), COLLECT, subValue(undefined)]],
  // a hole in the types (found by this property: it passed the check, and the consumer then failed after
  // writing its checkpoint row)
  [
    [
      configOf({ name: FRESH, filter: subValue({ types: new Array<unknown>(1) }, '{ types: [<hole>] }') }),
      throwing(new Error('no'), '<handler throwing an Error>'),
      subValue(undefined),
    ],
  ],
  [[configOf({ name: FRESH, from: subValue({ txId: '18446744073709551615', globalPosition: 0 }) }), COLLECT, subValue(undefined)]],
  [[configOf({ name: FRESH }), throwing(Object.create(null), '<handler throwing a null-prototype object>'), subValue({ maxAttempts: 1 })]],
  [
    [
      configOf({ name: FRESH }),
      throwing(new Error('no'), '<handler throwing an Error>'),
      subValue({ maxAttempts: 2, backoff: () => Symbol('when') }, '{ maxAttempts: 2, backoff: () => <symbol> }'),
    ],
  ],
  [
    [
      configOf({ name: FRESH }),
      throwing(new Error('no'), '<handler throwing an Error>'),
      subValue(
        {
          maxAttempts: 2,
          backoff: () => {
            throw new Error('backoff refuses')
          },
        },
        '{ maxAttempts: 2, backoff: <throws> }',
      ),
    ],
  ],
  [[configOf({ name: FRESH }), COLLECT, subValue({ onError: 'log it' })]],
  [[configOf({ name: FRESH }), COLLECT, subValue({ transactional: 'yes' })]],
]

function subscribeProperty(
  open: () => Promise<Pick<OpenedTestStore, 'store' | 'close'>>,
  connectionString: () => string | undefined,
  numRuns: number,
): () => Promise<void> {
  return async () => {
    const { store, close } = await open()
    let busy: Subscription | undefined
    try {
      // a small log: two sessions, appends, a revision, a rewind, a redaction
      const session = await store.createSession()
      const other = await store.createSession()
      const [a, b, c] = [user('one'), user('two'), user('three')]
      await store.append(session, [a, b, c])
      await store.revise(session, b.id, { role: 'user', content: 'two, revised' })
      await store.append(other, [user('elsewhere')])
      await store.rewind(session, { from: c.id })
      await store.redact(session, a.id, { reason: 'test' })
      const { rows: lastRows } = await sql<{ tx_id: string; global_position: string }>`
        select tx_id::text as tx_id, global_position::text as global_position from turnlog.events order by events.tx_id desc, events.global_position desc limit 1`.execute(
        store.db,
      )
      const last: Checkpoint = { txId: lastRows[0]?.tx_id ?? '0', globalPosition: Number(lastRows[0]?.global_position ?? 0) }
      const { rows: all } = await sql<{ tx_id: string; global_position: string; session_id: string; type: string }>`
        select tx_id::text as tx_id, global_position::text as global_position, session_id::text as session_id, type
          from turnlog.events order by events.tx_id, events.global_position`.execute(store.db)
      busy = store.subscribe({ name: `busy-${randomUUID()}`, from: 'now' }, () => {}, { pollIntervalMs: 50 })
      await within(10_000, 'the busy consumer', busy.catchUp())
      const busyName = busy.name

      await fc.assert(
        fc.asyncProperty(subscribeCallArb, async ([configB, handlerB, optionsB]) => {
          // given
          const seen = { events: [] as SubscribedEvent[], errors: [] as unknown[], handlerCalls: 0 }
          const ctx: SubCtx = {
            fresh: `bad-input-${randomUUID()}`,
            busy: busyName,
            session,
            missing: randomUUID(),
            last,
            connectionString: connectionString(),
            seen,
          }
          const config = configB(ctx) as { name?: unknown; from?: unknown; filter?: { types?: unknown; sessionId?: unknown } }
          const handler = handlerB(ctx)
          const options = optionsB(ctx) as { onError?: unknown } | undefined
          const rowsBefore = (await sql<{ n: string }>`select count(*)::text as n from turnlog.subscriptions`.execute(store.db)).rows[0]?.n
          // when
          let sub: Subscription | undefined
          let error: unknown
          try {
            sub = store.subscribe(config as never, handler as never, options as never)
          } catch (e) {
            error = e
          }
          // then
          expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
          if (sub === undefined) {
            if (!isTurnlogError(error)) throw new Error(`subscribe threw a raw ${String(error)}`, { cause: error })
            tally.set(`subscribe ${error.code}`, (tally.get(`subscribe ${error.code}`) ?? 0) + 1)
            if (!INPUT_CODES.includes(error.code))
              throw new Error(`subscribe answered bad input with ${error.code}: ${error.message}`, { cause: error })
            // refused before it started: no checkpoint row
            expect((await sql<{ n: string }>`select count(*)::text as n from turnlog.subscriptions`.execute(store.db)).rows[0]?.n).toBe(
              rowsBefore,
            )
            return
          }
          const running = sub
          // started: every option it took has its documented type (none was silently ignored or coerced)
          const o = (options ?? {}) as Record<string, unknown>
          for (const k of ['transactional', 'listen', 'waitForLock', 'reconnect'])
            if (o[k] !== undefined) expect(typeof o[k]).toBe('boolean')
          for (const k of ['onError', 'onStateChange']) if (o[k] !== undefined) expect(typeof o[k]).toBe('function')
          let outcome: 'caught up' | 'failed' | 'still running'
          let checkpoint: Checkpoint | undefined
          let failure: unknown
          try {
            checkpoint = await within(
              SUBSCRIPTION_DEADLINE_MS,
              'catchUp',
              Promise.race([running.catchUp(), running.done.then(() => Promise.reject(new Error('done resolved before catchUp')))]),
            )
            outcome = 'caught up'
          } catch (e) {
            if (e instanceof Error && e.message.startsWith('HANG:')) outcome = 'still running'
            else {
              outcome = 'failed'
              failure = e
            }
          }
          // stop() always settles (it is what close() waits for)
          await within(10_000, 'stop', running.stop())
          expect(['stopped', 'failed']).toContain(running.state)
          tally.set(
            `subscribe ${outcome === 'failed' && isTurnlogError(failure) ? failure.code : outcome}`,
            (tally.get(`subscribe ${outcome === 'failed' && isTurnlogError(failure) ? failure.code : outcome}`) ?? 0) + 1,
          )
          if (outcome === 'failed') {
            if (!isTurnlogError(failure)) throw new Error(`the subscription failed with a raw ${String(failure)}`, { cause: failure })
            expect(Object.hasOwn(ERROR_CODES, failure.code)).toBe(true)
            // the handler gave up, the name is taken, or the input is refused; a connection error only for a bad connectionString
            const ownConnection = (options as { connectionString?: unknown } | undefined)?.connectionString
            const allowed = [
              'SUBSCRIPTION_FAILED',
              'SUBSCRIPTION_LOCKED',
              'INVALID_INPUT',
              ...(ownConnection !== undefined && ownConnection !== ctx.connectionString ? ['DB_ERROR', 'DB_TRANSIENT', 'DB_TIMEOUT'] : []),
            ]
            if (!allowed.includes(failure.code))
              throw new Error(`the subscription failed with ${failure.code}: ${failure.message}`, { cause: failure })
            if (failure.code === 'SUBSCRIPTION_FAILED') expect(seen.handlerCalls).toBeGreaterThan(0)
            // refused input leaves no checkpoint row behind (the name stays usable)
            if (failure.code === 'INVALID_INPUT')
              expect((await sql<{ n: string }>`select count(*)::text as n from turnlog.subscriptions`.execute(store.db)).rows[0]?.n).toBe(
                rowsBefore,
              )
            expect(running.error).toBe(failure)
            if ((options?.onError as { recording?: boolean } | undefined)?.recording === true) expect(seen.errors).toEqual([failure])
            return
          }
          expect(running.error).toBeNull()
          if (outcome === 'still running') return
          // caught up: the stored checkpoint is the one the consumer reports, and it covers the log
          const { rows } = await sql<{ tx_id: string; global_position: string }>`
            select tx_id::text as tx_id, global_position::text as global_position from turnlog.subscriptions where name = ${running.name}`.execute(
            store.db,
          )
          expect(rows.map((r) => ({ txId: r.tx_id, globalPosition: Number(r.global_position) }))).toEqual([checkpoint])
          expect(running.checkpoint).toEqual(checkpoint)
          // delivered in (txId, globalPosition) order, each matching the filter
          const keys = seen.events.map((e) => [BigInt(e.txId), e.globalPosition] as const)
          for (let i = 1; i < keys.length; i++) {
            const [t0, g0] = keys[i - 1] as readonly [bigint, number]
            const [t1, g1] = keys[i] as readonly [bigint, number]
            expect(t1 > t0 || (t1 === t0 && g1 > g0)).toBe(true)
          }
          const types = Array.isArray(config.filter?.types) ? (config.filter.types as string[]) : undefined
          const sessionFilter = typeof config.filter?.sessionId === 'string' ? config.filter.sessionId.toLowerCase() : undefined
          const matches = (r: { type: string; session_id: string }): boolean =>
            (types === undefined || types.includes(r.type)) && (sessionFilter === undefined || r.session_id === sessionFilter)
          for (const e of seen.events) expect(matches({ type: e.type, session_id: e.sessionId })).toBe(true)
          // a new name from the start of the log: every matching event, once
          if (config.name === ctx.fresh && (config.from === undefined || config.from === 'start')) {
            const expected = all.filter(matches).map((r) => `${r.tx_id}/${r.global_position}`)
            expect(running.delivered).toBe(expected.length)
            // the collecting handler saw exactly those, once, in order (a garbage function handler records nothing)
            if (seen.handlerCalls > 0) expect(seen.events.map((e) => `${e.txId}/${e.globalPosition}`)).toEqual(expected)
          }
        }),
        { numRuns, examples: SUBSCRIBE_EXAMPLES },
      )
    } finally {
      await busy?.stop()
      await close()
    }
  }
}

let subDb: TestDatabase | undefined

describe('subscribe: garbage config, handler and options', () => {
  beforeAll(async () => {
    subDb = await createTestDatabase({ migrated: true })
  })

  afterAll(async () => {
    await subDb?.drop()
  })

  it('Postgres: refused with INVALID_INPUT and no checkpoint row, or a consumer that catches up, fails with a registry code, or stops', async () => {
    const url = (subDb as TestDatabase).connectionString
    await subscribeProperty(
      () => onPostgres(url),
      () => url,
      Number(process.env['TURNLOG_BAD_INPUT_SUBSCRIBE_RUNS'] ?? 80),
    )()
  }, 120_000)

  it(
    'PGlite: the same, a smaller run',
    subscribeProperty(
      () => openTestStore('pglite'),
      () => undefined,
      40,
    ),
    120_000,
  )

  it('a poll interval beyond the timer limit (2^31 - 1 ms) waits instead of spinning', async () => {
    // given: a consumer that caught up and then sleeps for pollIntervalMs (no LISTEN)
    const store = await openStore({ connectionString: (subDb as TestDatabase).connectionString })
    const session = await store.createSession()
    const seen: string[] = []
    const sub = store.subscribe(
      { name: `long-poll-${randomUUID()}`, from: 'now', filter: { sessionId: session } },
      (e) => void seen.push(e.eventId),
      { pollIntervalMs: 2 ** 31, listen: false },
    )
    try {
      await within(10_000, 'catchUp', sub.catchUp())
      // when: an event commits while it sleeps
      await store.append(session, [user('while it sleeps')])
      await new Promise((resolve) => setTimeout(resolve, 300))
      // then: Node fires a timer over 2^31 - 1 ms at once, so a consumer that passed it on would already have it
      expect(seen).toEqual([])
      expect(sub.state).toBe('running')
    } finally {
      await sub.stop()
      await store.close()
    }
  })
})

describe('redaction of messages whose pairing ids hold NUL or lone surrogates', () => {
  it('redact succeeds and scrubs the content although the placeholder keeps an id with NUL and a lone surrogate (regression: JSON operators refused the placeholders)', async () => {
    // given: a tool call and its result paired by an id with a NUL and a lone surrogate, stored exactly
    const store = await openStore({ connectionString: db.connectionString })
    const session = await store.createSession()
    const pairing = 'call_\u0000\ud800'
    const call = createMessage({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: pairing, type: 'function', function: { name: 'f', arguments: '{}' } }],
    })
    const result = createMessage({ role: 'tool', tool_call_id: pairing, content: 'personal data' })
    await store.append(session, [call, result])
    try {
      // when
      const redacted = await store.redact(session, result.id, { reason: 'gdpr' })
      // then: scrubbed, the pairing id kept exactly, the content gone from the live view
      expect(redacted.sessions.map((x) => x.scrubbed)).toEqual([1])
      const { messages, pairing: check } = await store.load(session)
      const stored = messages.find((m) => m.id === result.id)
      expect(stored?.payload.tool_call_id).toBe(pairing)
      expect(JSON.stringify(stored?.payload)).not.toContain('personal data')
      expect(check.ok).toBe(true)
    } finally {
      await store.close()
    }
  })
})

describe('large values', () => {
  const TEN_MB = 10 * 1024 * 1024

  it('a 10 MB string payload is stored and read back exactly (default limit 16 MiB)', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false })
    const session = await store.createSession()
    const big = createMessage({
      role: 'tool',
      tool_call_id: 'call_big',
      content: `${'\u{1F916}'.repeat(3)}\u0000\ud800${'z'.repeat(TEN_MB)}`,
    })
    // when
    const result = await store.append(session, [big])
    // then
    expect(result.appended).toEqual([big.id])
    const [stored] = (await store.load(session)).messages
    expect(stored?.payload.content).toBe(big.payload.content)
    await store.close()
  }, 60_000)

  it('maxMessageBytes refuses a bigger message with MESSAGE_TOO_LARGE (details: messageId, size, limit) and writes nothing', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false, maxMessageBytes: 1024 * 1024 })
    const small = user('fits')
    const session = await store.createSession()
    await store.append(session, [small])
    const big = createMessage({ role: 'user', content: 'z'.repeat(TEN_MB) })
    const before = await snapshot(store)
    // when
    const calls: [string, () => Promise<unknown>][] = [
      ['append', () => store.append(session, [user('ok'), big])],
      ['flush', () => store.flush(session, [small, big])],
      ['revise', () => store.revise(session, small.id, { role: 'user', content: 'z'.repeat(TEN_MB) })],
      ['compact', () => store.compact(session, { covered: [small.id], summary: big })],
    ]
    // then
    for (const [name, call] of calls) {
      let error: unknown
      try {
        await call()
      } catch (e) {
        error = e
      }
      if (!isTurnlogError(error, 'MESSAGE_TOO_LARGE')) throw new Error(`${name}: expected MESSAGE_TOO_LARGE, got ${String(error)}`)
      expect(error.details).toEqual({ messageId: expect.any(String), size: expect.any(Number), limit: 1024 * 1024 })
      expect(error.details['size']).toBeGreaterThan(TEN_MB)
      if (name !== 'revise') expect(error.details['messageId']).toBe(big.id)
    }
    expect(await snapshot(store)).toBe(before)
    await store.close()
  }, 60_000)

  it('10 MB strings where ids, tenants and reasons go are refused with INVALID_INPUT (within the test timeout: no pass over them is quadratic)', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false })
    const huge = 'a'.repeat(TEN_MB)
    const m = user('q')
    const session = await store.createSession()
    await store.append(session, [m])
    const before = await snapshot(store)
    // when
    const calls: (() => Promise<unknown>)[] = [
      () => store.getSession(huge),
      () => store.createSession({ id: huge }),
      () => store.createSession({ tenantId: huge }),
      () => store.rewind(session, { after: m.id }, { reason: huge }),
      () => store.rewind(session, { after: huge as MessageId }),
      () => store.append(session, [createMessage({ role: 'user', content: 'x' }, { externalId: huge, scope: null })]),
      () => store.sessions({ after: huge }),
    ]
    // then
    for (const call of calls) {
      let error: unknown
      try {
        await call()
      } catch (e) {
        error = e
      }
      expect(isTurnlogError(error, 'INVALID_INPUT')).toBe(true)
    }
    expect(await snapshot(store)).toBe(before)
    await store.close()
  }, 60_000)
})

/** Every runtime export of `@turnlog/postgres` and how the garbage property calls it. */
const fnSpec = functionExport
const classSpec = classExport
const valueSpec = VALUE_EXPORT
export const POSTGRES_EXPORTS = {
  DEFAULT_MAX_BATCH_BYTES: valueSpec,
  EVENTS_CHANNEL: valueSpec,
  LAG_COUNT_CAP: valueSpec,
  MAX_BATCH_BYTES_CEILING: valueSpec,
  PostgresStore: classSpec(1),
  REBASED_TX_ID: valueSpec,
  START_CHECKPOINT: valueSpec,
  Subscription: classSpec(3),
  TURNLOG_ROLES: valueSpec,
  compareCheckpoints: fnSpec(2),
  dropSubscription: fnSpec(2),
  dedicatedConnectionFromConfig: fnSpec(1),
  dedicatedConnectionFromPool: fnSpec(1),
  listSubscriptions: fnSpec(1),
  migrateToLatest: fnSpec(1),
  oldestOpenTransaction: fnSpec(2),
  openStore: fnSpec(1),
  parseOpenStoreConfig: fnSpec(1),
  readCommittedEvents: fnSpec(2),
  rebaseAfterRestore: fnSpec(2),
  rebaseSubscription: fnSpec(3),
  rolesSql: fnSpec(1),
  splitByBatchBytes: fnSpec(2),
  withRetry: fnSpec(2),
} as const satisfies Record<keyof typeof postgres, ExportSpec>

/** The store methods the garbage property above calls (`Method`), as a value to compare with the class. */
const STORE_METHODS_UNDER_TEST: readonly Method[] = [
  'createSession',
  'getSession',
  'append',
  'flush',
  'sync',
  'load',
  'events',
  'sessions',
  'rewind',
  'compact',
  'revise',
  'finalize',
  'fork',
  'rebuild',
  'transcript',
  'state',
  'conflicts',
  'redact',
  'oldestOpenTransaction',
  'withTransaction',
  'importSessions',
  'atomically',
  'findSessionIds',
  'countConflicts',
]

describe('every export of @turnlog/postgres, called with garbage (issue 13.11)', () => {
  it('the store property covers every method of PostgresStore (close and subscribe have tests of their own; flavor and db are getters)', () => {
    const methods = Object.getOwnPropertyNames(postgres.PostgresStore.prototype).filter((name) => {
      const descriptor = Object.getOwnPropertyDescriptor(postgres.PostgresStore.prototype, name)
      return name !== 'constructor' && typeof descriptor?.value === 'function'
    })
    expect(methods.filter((m) => m !== 'close' && m !== 'subscribe').sort()).toEqual([...STORE_METHODS_UNDER_TEST].sort())
  })

  it('each function returns or throws a TurnlogError with a registry code (never a raw TypeError); the table covers every export', async () => {
    await expectEveryExportRejectsGarbage(postgres, POSTGRES_EXPORTS, { numRuns: 80 })
  }, 120_000)

  it('every store method (PGlite) with hostile values (throwing getters, trapping and revoked Proxies, …) answers with a TurnlogError, never a raw error', async () => {
    // given: the store's methods as a module, so a method added later is called too
    const { store, close } = await openTestStore('pglite')
    try {
      const names = Object.getOwnPropertyNames(postgres.PostgresStore.prototype).filter(
        (name) =>
          name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(postgres.PostgresStore.prototype, name)?.value === 'function',
      )
      const methods = Object.fromEntries(
        names.map((name) => [
          name,
          (...args: unknown[]) => {
            const result = (store as unknown as Record<string, (...a: unknown[]) => unknown>)[name]?.(...args)
            // events() is an async generator: its work happens when it is iterated
            return name === 'events'
              ? (async () => {
                  for await (const _ of result as AsyncIterable<unknown>) void _
                })()
              : result
          },
        ]),
      )
      const specs = Object.fromEntries(names.map((name): [string, ExportSpec] => [name, { kind: 'function', arity: 4 }]))
      // when / then: close would end the store; subscribe has a property of its own
      await expectEveryExportRejectsGarbage(methods, specs, { numRuns: 100, skip: ['close', 'subscribe'] })
    } finally {
      await close()
    }
  }, 180_000)

  it('regression: withRetry(fn, null) and openStore({ maxMessageBytes: NaN | "abc" | {} }) are INVALID_INPUT naming the field; nothing connects', async () => {
    const codeOf = async (call: () => Promise<unknown>): Promise<unknown> => {
      try {
        await call()
        return 'returned'
      } catch (error) {
        return isTurnlogError(error) ? [error.code, error.details['field']] : String(error)
      }
    }
    expect(await codeOf(() => withRetry(async () => 1, null as never))).toEqual(['INVALID_INPUT', 'options'])
    for (const bad of [NaN, 'abc', {}, 0, -1, 1.5, Infinity]) {
      expect(await codeOf(() => openStore({ embedded: true, maxMessageBytes: bad as never }))).toEqual([
        'INVALID_INPUT',
        'config.maxMessageBytes',
      ])
    }
    expect(await codeOf(() => openStore({ embedded: true, knownSessions: '10' as never }))).toEqual([
      'INVALID_INPUT',
      'config.knownSessions',
    ])
    expect(await codeOf(() => openStore({ embedded: true, groupCommit: { maxBatches: 0 } }))).toEqual([
      'INVALID_INPUT',
      'config.groupCommit.maxBatches',
    ])
    expect(await codeOf(() => openStore({ embedded: true, migrate: 'no' as never }))).toEqual(['INVALID_INPUT', 'config.migrate'])
    expect(await codeOf(() => openStore({ embedded: true, dataDir: 42 as never }))).toEqual(['INVALID_INPUT', 'config.dataDir'])
    expect(await codeOf(() => openStore({ embedded: 'yes' as never }))).toEqual(['INVALID_INPUT', 'config.embedded'])
    expect(await codeOf(() => openStore({ pool: {} as never }))).toEqual(['INVALID_INPUT', 'config.pool'])
    expect(await codeOf(() => openStore({ connectionString: 'postgres://x', pool: 'max=1' as never }))).toEqual([
      'INVALID_INPUT',
      'config.pool',
    ])
    expect(await codeOf(() => openStore({ kysely: {} as never }))).toEqual(['INVALID_INPUT', 'config.kysely'])
    // two ways to reach the database: the second was silently ignored (an in-memory PGlite opened where a
    // server was meant, everything written lost at exit)
    expect(await codeOf(() => openStore({ embedded: true, connectionString: 'postgres://x' }))).toEqual([
      'INVALID_INPUT',
      'config.connectionString',
    ])
    expect(await codeOf(() => openStore({ embedded: true, pool: { max: 1 } } as never))).toEqual(['INVALID_INPUT', 'config.pool'])
    expect(await codeOf(() => openStore({ kysely: {} as never, connectionString: 'postgres://x' } as never))).toEqual([
      'INVALID_INPUT',
      'config.connectionString',
    ])
    // an option given as undefined is not given (a variable left unset)
    const store = await openStore({ embedded: true, connectionString: undefined } as never)
    try {
      // session metadata with no JSON form is named as metadata (before: "payload.at: …", no field)
      const bad = await codeOf(() => store.createSession({ metadata: { at: new Date(0) } as never }))
      expect(bad).toEqual(['INVALID_MESSAGE', 'metadata'])
      expect(await store.createSession({ metadata: { at: new Date(0) } as never }).catch((e: Error) => e.message)).toBe(
        'metadata.at: only plain objects are allowed',
      )
    } finally {
      await store.close()
    }
  })

  it('class: openStore with one field of a valid embedded config replaced by garbage is refused with INVALID_INPUT naming that field, before it opens anything', async () => {
    const fields = ['maxMessageBytes', 'knownSessions', 'groupCommit', 'migrate', 'dataDir'] as const
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...fields), hostileValueArb, async (field, recipe) => {
        const value = recipe.make()
        const valid: Record<(typeof fields)[number], (v: unknown) => boolean> = {
          maxMessageBytes: (v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0,
          knownSessions: (v) => typeof v === 'number' && Number.isSafeInteger(v) && v > 0,
          groupCommit: (v) =>
            typeof v === 'boolean' ||
            (typeof v === 'object' &&
              v !== null &&
              [Object.prototype, null].includes(Object.getPrototypeOf(v) as object | null) &&
              // a key whose value is undefined counts as absent (errors.md, INVALID_INPUT): { id: undefined } is {}
              Object.entries(v).every(
                ([k, n]) =>
                  n === undefined ||
                  (['maxBatches', 'maxInFlight'].includes(k) && typeof n === 'number' && Number.isSafeInteger(n) && n > 0),
              )),
          migrate: (v) => typeof v === 'boolean',
          dataDir: () => false,
        }
        const isValid = (): boolean => {
          try {
            return valid[field](value)
          } catch {
            return false // a hostile Proxy is never a valid option
          }
        }
        // a dataDir string is a path: it would open (and create) a database there, so strings are not garbage for it
        fc.pre(value !== undefined && !isValid() && !(field === 'dataDir' && typeof value === 'string'))
        let caught: unknown
        try {
          const store = await openStore({ embedded: true, [field]: value } as never)
          await store.close()
        } catch (error) {
          caught = error
        }
        expect(isTurnlogError(caught, 'INVALID_INPUT') ? String(caught.details['field']).split('.').slice(0, 2).join('.') : caught).toBe(
          `config.${field}`,
        )
      }),
      { numRuns: 150 },
    )
  })
})
