/**
 * Garbage in, typed errors out. fast-check throws generated garbage (wrong types, huge nesting,
 * invalid ids, lone surrogates, SQL-looking strings, prototype-pollution keys, exotic objects, large
 * strings) at every public call of the store, mixed with valid values so that garbage reaches every
 * layer. Each call must either store its input losslessly (read back and compared) or reject it with a
 * TurnlogError whose code is an input-error code of the registry: never a raw driver error, never a
 * crash, never `DB_ERROR` (garbage that reached the database), and never a partial write (the
 * database is unchanged after a rejection). Runs on Postgres, and a smaller run on embedded PGlite.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import fc from 'fast-check'
import { sql } from 'kysely'
import {
  ERROR_CODES,
  createMessage,
  isTurnlogError,
  toFrozenJson,
  toMessage,
  type ErrorCode,
  type Message,
  type MessageId,
  type SessionId,
} from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { chatPayloadArb, createTestDatabase, createdAtArb, jsonValueArb, messageArb, safeTextArb, toolCallIdArb, weirdStringArb, type TestDatabase } from '@turnlog/testing'

/** The codes a call may answer bad input with. Anything else (DB_ERROR above all) is a finding. */
const INPUT_CODES: readonly ErrorCode[] = [
  'INVALID_MESSAGE',
  'INVALID_INPUT',
  'MESSAGE_TOO_LARGE',
  'MESSAGE_CONFLICT',
  'VERSION_CONFLICT',
  'SESSION_NOT_FOUND',
  'SESSION_EXISTS',
  'UNKNOWN_MESSAGE',
]

/** Every public call of the store (close() aside). */
type Method =
  | 'createSession' | 'getSession' | 'append' | 'flush' | 'load' | 'events' | 'sessions' | 'rewind' | 'compact'
  | 'revise' | 'finalize' | 'fork' | 'rebuild' | 'transcript' | 'state' | 'conflicts'

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
type Build<T = unknown> = ((ctx: Ctx) => T) & { [fc.toStringMethod]: () => string }

function build<T>(label: string | (() => string), f: (ctx: Ctx) => T): Build<T> {
  return Object.assign(f, { [fc.toStringMethod]: typeof label === 'string' ? () => label : label })
}

/** A literal value; its label is computed only when fast-check prints a counterexample. */
const lit = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<Build<T>> =>
  arb.map((v) =>
    build(() => {
      try {
        const text = fc.stringify(v)
        return text.length > 200 ? `${text.slice(0, 200)}… (${text.length} chars)` : text
      } catch {
        return '<too deep to print>'
      }
    }, () => v),
  )

// ---------------------------------------------------------------------------------------------------
// garbage

const ONE_MB = 'y'.repeat(1024 * 1024)

const sqlArb = fc.constantFrom(
  "'); drop table turnlog.events; --",
  "x'; delete from turnlog.sessions where '1'='1",
  '1 or 1=1',
  '$1::uuid',
  "'::json",
  "\\'; select pg_sleep(5); --",
  '*/ truncate turnlog.events /*',
  "e'\\x00'",
  '${sessionId}',
  '%s%s%s%n',
  'null',
  'NULL',
  '[object Object]',
)

const protoArb: fc.Arbitrary<unknown> = fc
  .constantFrom(
    '{"__proto__":{"polluted":"yes"}}',
    '{"constructor":{"prototype":{"polluted":"yes"}}}',
    '{"role":"user","content":"hi","__proto__":{"polluted":"yes","role":"system"}}',
    '[{"__proto__":{"polluted":"yes"}}]',
    '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","__proto__":{"polluted":"yes"}}]}',
  )
  .map((text) => JSON.parse(text) as unknown)

const invalidIdArb: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(
    '',
    ' ',
    'not-a-uuid',
    '00000000-0000-0000-0000-000000000000',
    'ffffffff-ffff-ffff-ffff-ffffffffffff',
    '01234567-89ab-cdef-0123-456789abcdef',
    '{01234567-89ab-4def-8123-456789abcdef}',
    '01234567-89ab-4def-8123-456789abcdef\u0000',
    '01234567-89ab-4def-8123-456789abcde\ud800',
    '0123456789ab4def8123456789abcdef',
    "01234567-89ab-4def-8123-456789abcdef'; drop table turnlog.events; --",
  ),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => ` ${u}`),
  weirdStringArb,
)

class Foo {
  readonly x = 1
}

/** `[<hole>, 1]`: JSON has no holes, so toFrozenJson must refuse it rather than write a null. */
const sparse: unknown[] = []
sparse[1] = 1

const exoticArb: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  NaN, Infinity, -Infinity, -0, 2 ** 53 + 1, -1, 1.5, 1e308, Number.MIN_VALUE, true, false, null, undefined,
  10n, Symbol('s'), () => 'fn', new Date(NaN), new Date(0), /re/g, new Map([['a', 1]]), new Set([1]),
  new Uint8Array(3), new Error('boom'), Object.create(null) as unknown, sparse, new Foo(), Object('boxed'), Object(1),
)

/** Nesting far beyond the 64 levels a payload may have. */
const deepArb: fc.Arbitrary<unknown> = fc.integer({ min: 65, max: 20_000 }).map((n) => {
  let v: unknown = 'core'
  for (let i = 0; i < n; i++) v = i % 2 === 0 ? [v] : { k: v }
  return v
})

const garbageArb: fc.Arbitrary<unknown> = fc.oneof(
  {
    weight: 4,
    arbitrary: fc.anything({
      maxDepth: 3,
      withBigInt: true,
      withDate: true,
      withMap: true,
      withSet: true,
      withTypedArray: true,
      withSparseArray: true,
      withNullPrototype: true,
      withBoxedValues: true,
      withObjectString: true,
    }),
  },
  { weight: 2, arbitrary: sqlArb },
  { weight: 2, arbitrary: invalidIdArb },
  { weight: 2, arbitrary: weirdStringArb },
  { weight: 2, arbitrary: exoticArb },
  { weight: 1, arbitrary: protoArb },
  { weight: 1, arbitrary: deepArb },
  { weight: 1, arbitrary: fc.constant(ONE_MB) },
)

/** `valid` most of the time, garbage otherwise. */
const mostly = <T>(valid: fc.Arbitrary<Build<T>>, garbageWeight = 1): fc.Arbitrary<Build> =>
  fc.oneof({ weight: 3, arbitrary: valid as fc.Arbitrary<Build> }, { weight: garbageWeight, arbitrary: lit(garbageArb) })

const maybeUndefined = <T>(arb: fc.Arbitrary<Build<T>>): fc.Arbitrary<Build> =>
  fc.oneof(lit(fc.constant(undefined)), arb as fc.Arbitrary<Build>)

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
      fc.array(fc.record({ id: fc.oneof(toolCallIdArb, garbageArb), type: fc.constant('function'), function: fc.oneof(fc.record({ name: fc.string(), arguments: fc.oneof(fc.string(), garbageArb) }), garbageArb) }), { maxLength: 2 }),
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

const messageLikeArb = fc
  .record(
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
    arbitrary: fc.nat(5).map((i) => build(`<live[${i}].id with other content>`, (c) => createMessage({ role: 'user', content: `changed ${randomUUID()}` }, { id: (c.live[i % c.live.length] as Message).id }))),
  },
  { weight: 1, arbitrary: fc.constant(build('<foreign message>', (c) => c.foreign)) },
  { weight: 1, arbitrary: lit(garbageArb) },
)

const listOf = (item: fc.Arbitrary<Build>): fc.Arbitrary<Build> =>
  fc.array(item, { maxLength: 4 }).map((items) => build(`[${items.map((i) => i[fc.toStringMethod]()).join(', ')}]`, (c) => items.map((i) => i(c))))

const objectOf = (fields: Record<string, fc.Arbitrary<Build>>): fc.Arbitrary<Build> =>
  fc.record(fields, { requiredKeys: [] }).map((record) => {
    const entries = Object.entries(record) as [string, Build][]
    return build(`{ ${entries.map(([k, v]) => `${k}: ${v[fc.toStringMethod]()}`).join(', ')} }`, (c) =>
      Object.fromEntries(entries.map(([k, v]) => [k, v(c)])),
    )
  })

const versionArg = mostly(lit(fc.nat(40)))
const writeOptionsArg = maybeUndefined(mostly(objectOf({ expectedVersion: versionArg })))

const garbageCallArb: fc.Arbitrary<{ method: Method; args: Build[] }> = fc.oneof(
  { weight: 2, arbitrary: fc.tuple(maybeUndefined(mostly(objectOf({ id: mostly(lit(fc.uuid())), tenantId: mostly(lit(weirdStringArb)), metadata: mostly(lit(jsonValueArb)) })))).map((args) => ({ method: 'createSession' as const, args })) },
  { weight: 2, arbitrary: fc.tuple(sessionArg).map((args) => ({ method: 'getSession' as const, args })) },
  { weight: 4, arbitrary: fc.tuple(sessionArg, mostly(listOf(messageArg)), writeOptionsArg).map((args) => ({ method: 'append' as const, args })) },
  { weight: 4, arbitrary: fc.tuple(sessionArg, mostly(listOf(messageArg)), writeOptionsArg).map((args) => ({ method: 'flush' as const, args })) },
  { weight: 2, arbitrary: fc.tuple(sessionArg, maybeUndefined(mostly(objectOf({ at: versionArg })))).map((args) => ({ method: 'load' as const, args })) },
  { weight: 2, arbitrary: fc.tuple(sessionArg, maybeUndefined(mostly(objectOf({ fromSeq: versionArg, toSeq: versionArg })))).map((args) => ({ method: 'events' as const, args })) },
  { weight: 2, arbitrary: fc.tuple(maybeUndefined(mostly(objectOf({ tenantId: mostly(lit(weirdStringArb)), limit: mostly(lit(fc.integer({ min: -5, max: 1200 }))), after: mostly(lit(fc.uuid())) })))).map((args) => ({ method: 'sessions' as const, args })) },
  { weight: 3, arbitrary: fc.tuple(sessionArg, mostly(fc.oneof(objectOf({ after: messageIdArg }), objectOf({ from: messageIdArg }), objectOf({ after: messageIdArg, from: messageIdArg }))), maybeUndefined(mostly(objectOf({ expectedVersion: versionArg, reason: mostly(lit(weirdStringArb)) })))).map((args) => ({ method: 'rewind' as const, args })) },
  { weight: 3, arbitrary: fc.tuple(sessionArg, mostly(objectOf({ covered: mostly(fc.array(messageIdArg, { maxLength: 4 }).map((ids) => build(`[${ids.map((i) => i[fc.toStringMethod]()).join(', ')}]`, (c) => ids.map((i) => i(c))))), summary: mostly(fc.oneof(messageArg, listOf(messageArg))), reason: mostly(lit(weirdStringArb)), metadata: mostly(lit(jsonValueArb)), expectedVersion: versionArg }))).map((args) => ({ method: 'compact' as const, args })) },
  { weight: 3, arbitrary: fc.tuple(sessionArg, messageIdArg, payloadArg, maybeUndefined(mostly(objectOf({ status: mostly(lit(fc.constantFrom('partial', 'final'))), expectedVersion: versionArg })))).map((args) => ({ method: 'revise' as const, args })) },
  { weight: 3, arbitrary: fc.tuple(sessionArg, messageIdArg, maybeUndefined(payloadArg), writeOptionsArg).map((args) => ({ method: 'finalize' as const, args })) },
  { weight: 3, arbitrary: fc.tuple(sessionArg, mostly(objectOf({ at: messageIdArg, id: mostly(lit(fc.uuid())), tenantId: mostly(lit(weirdStringArb)), metadata: mostly(lit(jsonValueArb)) }))).map((args) => ({ method: 'fork' as const, args })) },
  { weight: 1, arbitrary: fc.tuple(maybeUndefined(mostly(objectOf({ sessionId: sessionArg, verify: mostly(lit(fc.boolean())), onProgress: mostly(lit(fc.constant(() => {}))) })))).map((args) => ({ method: 'rebuild' as const, args })) },
  { weight: 1, arbitrary: fc.tuple(sessionArg).map((args) => ({ method: 'transcript' as const, args })) },
  { weight: 1, arbitrary: fc.tuple(sessionArg, maybeUndefined(mostly(objectOf({ at: versionArg })))).map((args) => ({ method: 'state' as const, args })) },
  { weight: 1, arbitrary: fc.tuple(sessionArg).map((args) => ({ method: 'conflicts' as const, args })) },
)

/**
 * Calls whose arguments are valid but hostile (weird strings, lone surrogates, NUL, `__proto__` keys,
 * SQL text, unknown provider fields), so that the "stored losslessly" branch runs often.
 */
const hostileCallArb: fc.Arbitrary<{ method: Method; args: Build[] }> = fc.oneof(
  fc.tuple(fc.constant(build('<session>', (c) => c.session)), lit(fc.array(messageArb, { minLength: 1, maxLength: 4 }))).map((args) => ({ method: 'append' as const, args })),
  fc.tuple(fc.constant(build('<session>', (c) => c.session)), fc.array(messageArb, { minLength: 1, maxLength: 4 }).map((ms) => build(`[...live, ${ms.length} new]`, (c) => [...c.live, ...ms]))).map((args) => ({ method: 'flush' as const, args })),
  fc.tuple(fc.constant(build('<session>', (c) => c.session)), liveIdArb, lit(chatPayloadArb)).map((args) => ({ method: 'revise' as const, args })),
  fc.tuple(fc.constant(build('<session>', (c) => c.session)), fc.tuple(fc.integer({ min: 1, max: 3 }), messageArb, safeTextArb, fc.jsonValue({ maxDepth: 3 })).map(([n, summary, reason, metadata]) =>
    build(`{ covered: live[0..${n}], summary, reason, metadata }`, (c) => ({ covered: c.live.slice(0, n).map((m) => m.id), summary, reason, metadata })),
  )).map((args) => ({ method: 'compact' as const, args })),
  fc.tuple(fc.constant(build('<session>', (c) => c.session)), fc.tuple(fc.nat(5), jsonValueArb).map(([i, metadata]) =>
    build(`{ at: live[${i}], id: <new>, metadata }`, (c) => ({ at: (c.live[i % c.live.length] as Message).id, id: randomUUID(), metadata })),
  )).map((args) => ({ method: 'fork' as const, args })),
  fc.tuple(lit(fc.record({ id: fc.uuid(), tenantId: safeTextArb, metadata: jsonValueArb }, { requiredKeys: ['id'] }))).map((args) => ({ method: 'createSession' as const, args })),
  fc.tuple(fc.constant(build('<session>', (c) => c.session)), fc.nat(5).map((i) => build(`{ after: live[${i}] }`, (c) => ({ after: (c.live[i % c.live.length] as Message).id }))), lit(fc.record({ reason: safeTextArb }))).map((args) => ({ method: 'rewind' as const, args })),
)

const callArb = fc.oneof({ weight: 3, arbitrary: garbageCallArb }, { weight: 1, arbitrary: hostileCallArb })

// ---------------------------------------------------------------------------------------------------
// the harness

/** Everything the database holds that a call may write, as one string (conflict evidence excluded: it is written on purpose). */
async function snapshot(store: PostgresStore): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    select concat_ws('|',
      (select count(*) from turnlog.events),
      (select coalesce(max(global_position), 0) from turnlog.events),
      (select count(*) from turnlog.sessions),
      (select coalesce(sum(version), 0) from turnlog.sessions),
      (select md5(coalesce(string_agg(session_id::text || ':' || message_id::text || ':' || position || ':' || event_seq || ':' || partial, ',' order by session_id, message_id), ''))
         from turnlog.live_messages)) as s`.execute(store.db)
  return rows[0]?.s ?? ''
}

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
  const byId = async (session: string): Promise<Map<string, Message>> => new Map((await store.load(session)).messages.map((m) => [m.id as string, m]))
  if (method === 'append' || method === 'flush') {
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
  const fn = (store as unknown as Record<Method, (...a: unknown[]) => unknown>)[method]
  const value = fn.apply(store, args)
  if (method === 'events') {
    const out: unknown[] = []
    for await (const e of value as AsyncIterable<unknown>) out.push(e)
    return out
  }
  return await value
}

const tally = new Map<string, number>()

function runProperty(open: () => Promise<PostgresStore>, numRuns: number): () => Promise<void> {
  return async () => {
    const store = await open()
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
          let result: unknown
          let error: unknown
          try {
            result = await invoke(store, method, args)
          } catch (e) {
            error = e
          }
          // then
          expect(Object.getOwnPropertyNames(Object.prototype)).not.toContain('polluted')
          expect(({} as Record<string, unknown>)['polluted']).toBeUndefined()
          if (error === undefined) {
            tally.set(`${method} ok`, (tally.get(`${method} ok`) ?? 0) + 1)
            const after = await snapshot(store)
            const created = method === 'createSession' && before.split('|')[2] !== after.split('|')[2]
            await checkLossless(store, method, args, result, created)
            return
          }
          if (!isTurnlogError(error)) throw new Error(`${method} threw a raw ${String(error)}`, { cause: error })
          tally.set(`${method} ${error.code}`, (tally.get(`${method} ${error.code}`) ?? 0) + 1)
          expect(Object.hasOwn(ERROR_CODES, error.code)).toBe(true)
          if (!INPUT_CODES.includes(error.code)) throw new Error(`${method} answered bad input with ${error.code}: ${error.message}`, { cause: error })
          expect(await snapshot(store)).toBe(before)
        }),
        { numRuns },
      )
    } finally {
      await store.close()
    }
  }
}

let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})

afterAll(async () => {
  await db?.drop()
  const summary = [...tally].sort(([a], [b]) => a.localeCompare(b)).map(([k, n]) => `${k}: ${n}`)
  console.log(`bad-input outcomes (method result: count)\n  ${summary.join('\n  ')}`)
})

describe('garbage against every public call', () => {
  it('Postgres: stored losslessly or refused with an input error code, never a partial write', runProperty(() => openStore({ connectionString: db.connectionString }), Number(process.env['TURNLOG_BAD_INPUT_RUNS'] ?? 400)), 120_000)

  it('PGlite: the same, a smaller run', runProperty(() => openStore({ embedded: true }), 100), 120_000)
})

describe('large values', () => {
  const TEN_MB = 10 * 1024 * 1024

  it('a 10 MB string payload is stored and read back exactly (default limit 16 MiB)', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false })
    const session = await store.createSession()
    const big = createMessage({ role: 'tool', tool_call_id: 'call_big', content: `${'\u{1F916}'.repeat(3)}\u0000\ud800${'z'.repeat(TEN_MB)}` })
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

  it('10 MB strings where ids, tenants and reasons go are refused quickly with INVALID_INPUT', async () => {
    // given
    const store = await openStore({ connectionString: db.connectionString, migrate: false })
    const huge = 'a'.repeat(TEN_MB)
    const m = user('q')
    const session = await store.createSession()
    await store.append(session, [m])
    const before = await snapshot(store)
    const started = performance.now()
    // when
    const calls: (() => Promise<unknown>)[] = [
      () => store.getSession(huge),
      () => store.createSession({ id: huge }),
      () => store.createSession({ tenantId: huge }),
      () => store.rewind(session, { after: m.id }, { reason: huge }),
      () => store.rewind(session, { after: huge as MessageId }),
      () => store.append(session, [createMessage({ role: 'user', content: 'x' }, { externalId: huge })]),
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
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(await snapshot(store)).toBe(before)
    await store.close()
  }, 60_000)
})
