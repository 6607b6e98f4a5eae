/**
 * The pieces the packages' bad-input properties share: garbage of every kind, arguments built at call
 * time (from a per-run context) that print readably in counterexamples, and a time limit that turns a
 * hang into a finding.
 * @packageDocumentation
 */
import fc from 'fast-check'
import { sql } from 'kysely'
import { isTurnlogError } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { weirdStringArb } from './arbitraries.js'

const ONE_MB = 'y'.repeat(1024 * 1024)

/**
 * The `fc.anything` constraints of the garbage: every exotic kind of value fast-check can make (bigint,
 * Date, Map, Set, typed and sparse arrays, null-prototype and boxed values). Add `maxDepth`.
 */
export const EXOTIC_ANYTHING = {
  withBigInt: true,
  withDate: true,
  withMap: true,
  withSet: true,
  withTypedArray: true,
  withSparseArray: true,
  withNullPrototype: true,
  withBoxedValues: true,
} as const satisfies fc.ObjectConstraints

/** SQL-looking text: injection attempts, placeholders, casts, format directives. */
export const sqlArb: fc.Arbitrary<string> = fc.constantFrom(
  "'); drop table turnlog.events; --",
  "x'; delete from turnlog.sessions where '1'='1",
  '1 or 1=1',
  '$1::uuid',
  "'::json",
  "\\'; select pg_sleep(5); --",
  '*/ truncate turnlog.events /*',
  "e'\\x00'",
  '${sessionId}',
  '%s%s%n',
  '%s%s%s%n',
  'null',
  'NULL',
  '[object Object]',
)

/** JSON with `__proto__` and `constructor.prototype` keys (prototype pollution attempts), parsed. */
export const protoArb: fc.Arbitrary<unknown> = fc
  .constantFrom(
    '{"__proto__":{"polluted":"yes"}}',
    '{"constructor":{"prototype":{"polluted":"yes"}}}',
    '{"role":"user","content":"hi","__proto__":{"polluted":"yes","role":"system"}}',
    '[{"__proto__":{"polluted":"yes"}}]',
    '[{"constructor":{"prototype":{"polluted":"yes"}}}]',
    '{"role":"assistant","content":null,"tool_calls":[{"id":"c1","__proto__":{"polluted":"yes"}}]}',
  )
  .map((text) => JSON.parse(text) as unknown)

/** Ids that are not UUIDs, or nearly are. */
export const invalidIdArb: fc.Arbitrary<unknown> = fc.oneof(
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
    "01234567-89ab-4def-8123-456789abcdef'; --",
    "01234567-89ab-4def-8123-456789abcdef'; drop table turnlog.events; --",
  ),
  fc.uuid().map((u) => u.toUpperCase()),
  fc.uuid().map((u) => ` ${u}`),
  weirdStringArb,
)

class Foo {
  readonly x = 1
}

/** `[<hole>, 1]`: a sparse array. JSON has no holes, so a store must refuse it rather than write a null. */
const sparse: unknown[] = []
sparse[1] = 1

const exoticArb: fc.Arbitrary<unknown> = fc.constantFrom<unknown>(
  NaN,
  Infinity,
  -Infinity,
  -0,
  2 ** 53 + 1,
  -1,
  1.5,
  1e308,
  Number.MIN_VALUE,
  true,
  false,
  null,
  undefined,
  10n,
  Symbol('s'),
  () => 'fn',
  new Date(NaN),
  new Date(0),
  /re/g,
  new Map([['a', 1]]),
  new Set([1]),
  new Uint8Array(3),
  new Error('boom'),
  Object.create(null) as unknown,
  sparse,
  new Foo(),
  Object('boxed'),
  Object(1),
)

/** Nesting far beyond the 64 levels a payload may have (65 to 20,000 levels of arrays and objects). */
export const deepArb: fc.Arbitrary<unknown> = fc.integer({ min: 65, max: 20_000 }).map((n) => {
  let v: unknown = 'core'
  for (let i = 0; i < n; i++) v = i % 2 === 0 ? [v] : { k: v }
  return v
})

/**
 * Any value a caller could pass by mistake or malice: wrong types, exotic objects, SQL text, invalid ids,
 * weird strings, `__proto__` keys, deep nesting, a 1 MB string.
 */
export const garbageArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.anything({ ...EXOTIC_ANYTHING, maxDepth: 3, withObjectString: true }) },
  { weight: 2, arbitrary: sqlArb },
  { weight: 2, arbitrary: invalidIdArb },
  { weight: 2, arbitrary: weirdStringArb },
  { weight: 2, arbitrary: exoticArb },
  { weight: 1, arbitrary: protoArb },
  { weight: 1, arbitrary: deepArb },
  { weight: 1, arbitrary: fc.constant(ONE_MB) },
)

/** fast-check's printout of a value, cut short; a value too deep to print (it recurses) is named so. */
export function preview(value: unknown): string {
  try {
    const text = fc.stringify(value)
    return text.length > 200 ? `${text.slice(0, 200)}… (${text.length} chars)` : text
  } catch {
    return '<too deep to print>'
  }
}

/** An argument built from the run's context `C` when the call is made, printed by its label. */
export type Build<C, T = unknown> = ((ctx: C) => T) & { [fc.toStringMethod]: () => string }

/** The argument builders of a property whose arguments are built from a context `C`. */
export interface BuildKit<C> {
  /** An argument computed from the context, printed as `label`. */
  build<T>(label: string | (() => string), f: (ctx: C) => T): Build<C, T>
  /** A generated value as an argument, printed (shortened) as fast-check prints it. */
  lit<T>(arb: fc.Arbitrary<T>): fc.Arbitrary<Build<C, T>>
  /** Mostly `valid`, sometimes garbage. */
  mostly(valid: fc.Arbitrary<Build<C>>, validWeight?: number): fc.Arbitrary<Build<C>>
  /** `arb` or `undefined`. */
  maybeUndefined(arb: fc.Arbitrary<Build<C>>): fc.Arbitrary<Build<C>>
  /** A fixed value as an argument (an example's), printed as `label` or as fast-check prints it. */
  value(v: unknown, label?: string): Build<C>
  /** An object of the given arguments, printed `{ key: label, … }`. */
  record(fields: Record<string, Build<C>>): Build<C>
  /** An object with any subset of the fields (`requiredKeys` always there). */
  objectOf(fields: Record<string, fc.Arbitrary<Build<C>>>, requiredKeys?: readonly string[]): fc.Arbitrary<Build<C>>
  /** A list of items. */
  listOf(item: fc.Arbitrary<Build<C>>, maxLength?: number): fc.Arbitrary<Build<C>>
}

/** The builders for a context type `C` (see {@link BuildKit}). */
export function buildKit<C>(): BuildKit<C> {
  function build<T>(label: string | (() => string), f: (ctx: C) => T): Build<C, T> {
    return Object.assign(f, { [fc.toStringMethod]: typeof label === 'string' ? () => label : label })
  }

  const lit = <T>(arb: fc.Arbitrary<T>): fc.Arbitrary<Build<C, T>> =>
    arb.map((v) =>
      build(
        () => preview(v),
        () => v,
      ),
    )

  const mostly = (valid: fc.Arbitrary<Build<C>>, validWeight = 3): fc.Arbitrary<Build<C>> =>
    fc.oneof({ weight: validWeight, arbitrary: valid }, { weight: 1, arbitrary: lit(garbageArb) })

  const maybeUndefined = (arb: fc.Arbitrary<Build<C>>): fc.Arbitrary<Build<C>> => fc.oneof(lit(fc.constant(undefined)), arb)

  const value = (v: unknown, label?: string): Build<C> => build(label ?? (() => (v === null ? 'null' : fc.stringify(v))), () => v)

  const record = (fields: Record<string, Build<C>>): Build<C> => {
    const entries = Object.entries(fields)
    return build(`{ ${entries.map(([k, v]) => `${k}: ${v[fc.toStringMethod]()}`).join(', ')} }`, (c) =>
      Object.fromEntries(entries.map(([k, v]) => [k, v(c)])),
    )
  }

  const objectOf = (fields: Record<string, fc.Arbitrary<Build<C>>>, requiredKeys: readonly string[] = []): fc.Arbitrary<Build<C>> =>
    fc.record(fields, { requiredKeys: [...requiredKeys] }).map((r) => record(r as Record<string, Build<C>>))

  const listOf = (item: fc.Arbitrary<Build<C>>, maxLength = 4): fc.Arbitrary<Build<C>> =>
    fc
      .array(item, { maxLength })
      .map((items) => build(`[${items.map((i) => i[fc.toStringMethod]()).join(', ')}]`, (c) => items.map((i) => i(c))))

  return { build, lit, mostly, maybeUndefined, value, record, objectOf, listOf }
}

const RECORDING = Symbol('recording onProgress')

/**
 * A generated `onProgress` option that pushes each report to the run's `ctx.progress`, printed as
 * `<recording onProgress>`; {@link isRecordingProgress} tells it from a garbage function.
 */
export function recordingProgress<C extends { readonly progress: unknown[] }>(build: BuildKit<C>['build']): Build<C> {
  return build('<recording onProgress>', (c) => Object.assign((p: unknown) => void c.progress.push(p), { [RECORDING]: true }))
}

/** True when the options carry a {@link recordingProgress} (garbage may hold another function). */
export function isRecordingProgress(options: unknown): boolean {
  if (typeof options !== 'object' || options === null) return false
  const onProgress = (options as { onProgress?: unknown }).onProgress
  return typeof onProgress === 'function' && RECORDING in onProgress
}

/** Runs a call, never longer than `ms`: a hang is a finding (an error starting `HANG:`), not a jest timeout. */
export async function settle<T>(
  ms: number,
  what: string,
  work: () => Promise<T>,
): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  let timer: NodeJS.Timeout | undefined
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`HANG: ${what} did not settle within ${ms} ms`)), ms)
  })
  try {
    return { ok: true, value: await Promise.race([work(), timeout]) }
  } catch (error) {
    if (error instanceof Error && error.message.startsWith('HANG:')) throw error
    return { ok: false, error }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * What a call ends in, as one string: `'returned'`, the code of the TurnlogError it threw (or its
 * promise rejected with), or any other error as `String(error)`.
 */
export async function outcomeCode(call: () => unknown): Promise<string> {
  try {
    await call()
    return 'returned'
  } catch (error) {
    return isTurnlogError(error) ? error.code : String(error)
  }
}

/** A thrown value as one line, whatever it is. */
export function describeThrown(value: unknown): string {
  try {
    return value instanceof Error ? `${value.name}: ${value.message}` : String(value)
  } catch {
    return typeof value
  }
}

/**
 * Everything a call may write, as one string: event, session and scrubbed-payload counts, the last
 * global position, the sum of session versions, a checksum of the projection, and (unless
 * `withConflicts` is false) the conflict evidence. Conflict evidence is left out for imports: a refused
 * conflicting write records it on purpose (outside the refused transaction).
 */
export async function storeSnapshot(store: PostgresStore, withConflicts = true): Promise<string> {
  const { rows } = await sql<{ s: string }>`
    select concat_ws('|',
      (select count(*) from turnlog.events),
      (select coalesce(max(global_position), 0) from turnlog.events),
      (select count(*) from turnlog.sessions),
      (select coalesce(sum(version), 0) from turnlog.sessions),
      (select count(*) from turnlog.events where payload_digest is not null),
      (select case when ${withConflicts} then count(*) else 0 end from turnlog.conflicts),
      (select md5(coalesce(string_agg(session_id::text || ':' || message_id::text || ':' || position || ':' || event_seq || ':' || partial, ',' order by session_id, message_id), ''))
         from turnlog.live_messages)) as s`.execute(store.db)
  return rows[0]?.s ?? ''
}
