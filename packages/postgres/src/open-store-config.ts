import { TurnlogError } from '@turnlog/core'
import { checkKnownKeys, guardInput, parseInput } from '@turnlog/core/internal'
import { z } from 'zod'
import { MAX_BATCH_BYTES_CEILING } from './batch-limits.js'
import { checkKeysOfObject } from './check-arguments.js'

const positiveInt = z.number().int().positive().max(Number.MAX_SAFE_INTEGER)

/** A value with these methods (by shape: the caller's copy of the package may differ from ours). */
const withMethods = (what: string, ...methods: string[]): z.ZodType<object> =>
  z.custom<object>(
    (v) => typeof v === 'object' && v !== null && methods.every((m) => typeof (v as Record<string, unknown>)[m] === 'function'),
    { message: `must be ${what}` },
  )

const plainObject = z.custom<Record<string, unknown>>(
  (v) =>
    typeof v === 'object' &&
    v !== null &&
    !Array.isArray(v) &&
    [Object.prototype, null].includes(Object.getPrototypeOf(v) as object | null),
  { message: 'must be a plain object' },
)

/**
 * Fields every way of opening a store accepts (`OpenStoreCommonConfig`). The settings objects in them
 * hold only their own keys (checked by {@link parseFields} first, naming the key: zod's own refusal of
 * an unknown key names only the object).
 */
const common = {
  maxMessageBytes: positiveInt.optional(),
  maxBatchBytes: z.number().int().positive().max(MAX_BATCH_BYTES_CEILING).optional(),
  knownSessions: positiveInt.optional(),
  groupCommit: z
    .union([z.boolean(), plainObject.pipe(z.object({ maxBatches: positiveInt.optional(), maxInFlight: positiveInt.optional() }))])
    .optional(),
  migrate: z.boolean().optional(),
  telemetry: z
    .union([
      z.literal(false),
      plainObject.pipe(
        z.object({
          tracer: withMethods('an OpenTelemetry Tracer', 'startSpan').optional(),
          meter: withMethods('an OpenTelemetry Meter', 'createHistogram', 'createCounter').optional(),
        }),
      ),
    ])
    .optional(),
}

// eslint-disable-next-line no-control-regex
const NUL = /\u0000/

const schemas = {
  embedded: z.object({
    ...common,
    embedded: z.literal(true),
    dataDir: z
      .string()
      .min(1)
      .refine((d) => !NUL.test(d), { message: 'must not contain NUL' })
      .optional(),
    onLockTakenOver: z.custom<unknown>((v) => typeof v === 'function', { message: 'must be a function' }).optional(),
  }),
  pglite: z.object({ ...common, pglite: withMethods('a PGlite instance', 'query', 'exec', 'transaction', 'close') }),
  kysely: z.object({ ...common, kysely: withMethods('a Kysely instance', 'executeQuery', 'transaction', 'destroy') }),
  connectionString: z.object({
    ...common,
    connectionString: z
      .string()
      .min(1)
      .refine((s) => !NUL.test(s), { message: 'must not contain NUL' }),
    pool: plainObject.optional(),
    directConnection: z.boolean().optional(),
  }),
  pool: z.object({ ...common, pool: withMethods('a pg.Pool', 'connect', 'query', 'on') }),
} as const

/**
 * Validates the settings a {@link PostgresStore} is constructed with (`PostgresStoreInit`): `db` and
 * `root` Kysely instances, `flavor`, and the common settings with their documented types; any other
 * key is refused (`init.<key>`). Throws `INVALID_INPUT` naming the field. Returns a shallow copy.
 */
export function parseStoreInit<T>(init: T): T {
  if (typeof init !== 'object' || init === null)
    throw new TurnlogError('INVALID_INPUT', 'a PostgresStore needs its init object (use openStore)', { details: { field: 'init' } })
  return parseFields(StoreInitSchema.shape, init, 'init', 'PostgresStore') as T
}

const kyselyLike = withMethods('a Kysely instance', 'executeQuery', 'getExecutor')
const StoreInitSchema = z.object({
  ...common,
  db: kyselyLike,
  root: kyselyLike,
  flavor: z.enum(['postgres', 'pglite']),
  inTransaction: z.boolean().optional(),
  onClose: z.custom<() => Promise<void>>((v) => typeof v === 'function', { message: 'must be a function' }).optional(),
  known: withMethods('a KnownMessages cache', 'has', 'addAll', 'setVersion', 'version').optional(),
  dedicatedConnection: z.custom<unknown>((v) => typeof v === 'function', { message: 'must be a function' }).optional(),
  ownPool: withMethods('a pg.Pool', 'connect', 'query').optional(),
})

/**
 * Validates `openStore`'s config before anything connects: exactly one way to reach the database
 * (`embedded: true`, `pglite`, `kysely`, `connectionString`, or a `pool` instance, looked for in that order),
 * and every option it accepts with its documented type: `maxMessageBytes` and `knownSessions` positive
 * integers, `maxBatchBytes` an integer from 1 to 256 MiB, `groupCommit` a boolean or
 * `{ maxBatches?, maxInFlight? }` of positive integers, `migrate` and `directConnection` booleans, `telemetry` false or `{ tracer?, meter? }` (an OpenTelemetry
 * Tracer and Meter), `dataDir` and `connectionString` non-empty strings without NUL,
 * `pool` settings a plain object (with `connectionString`) or a `pg.Pool` (alone), `kysely` a Kysely
 * instance, `pglite` a PGlite instance. Throws `INVALID_INPUT` with `details.field` naming the field at fault. Returns a shallow
 * copy (the config's fields are read once).
 *
 * A key that is not an option of the way chosen is refused too, naming it (`config.grupCommit`, with
 * `did you mean groupCommit?` when an option is within edit distance 2; `config.dataDir` beside
 * `pglite`), and so is one in `groupCommit` or `telemetry` (`config.groupCommit.maxBatch`): a misspelt
 * option would otherwise open the store without it. A key whose value is `undefined` counts as absent,
 * as an option given `undefined` does (`{ ...defaults, ...overrides }` passes). The one place left open
 * is `pool` given as settings beside `connectionString`: it is handed to `pg.Pool` as it is, which takes
 * keys turnlog does not list (and ignores those it does not know).
 */
export function parseOpenStoreConfig<T>(config: T): T {
  if (typeof config !== 'object' || config === null || guardInput('config', () => Array.isArray(config))) {
    throw new TurnlogError('INVALID_INPUT', 'openStore needs a config object', { details: { field: 'config' } })
  }
  const has = (key: string): boolean => guardInput('config', () => key in config)
  const kind = (['embedded', 'pglite', 'kysely', 'connectionString', 'pool'] as const).find((k) => has(k))
  if (kind === undefined) {
    throw new TurnlogError(
      'INVALID_INPUT',
      'openStore needs one of { connectionString }, { pool }, { kysely }, { embedded: true } or { pglite }',
      {
        details: { field: 'config' },
      },
    )
  }
  // one way only: a second one would be silently ignored (an in-memory store opened where a server was meant)
  const given = (key: string): boolean => has(key) && guardInput('config', () => (config as Record<string, unknown>)[key]) !== undefined
  const others = CONFLICTING[kind].filter((k) => given(k))
  if (others.length > 0 && given(kind)) {
    throw new TurnlogError(
      'INVALID_INPUT',
      `openStore takes one way to reach the database: ${kind} and ${others.join(' and ')} were both given`,
      { details: { field: `config.${others[0] as string}` } },
    )
  }
  return parseFields(schemas[kind].shape, config, 'config', `openStore with ${kind}`) as T
}

/** The options that name another way to reach the database than each one (a `pool` of settings goes with `connectionString`). */
const CONFLICTING: Readonly<Record<'embedded' | 'pglite' | 'kysely' | 'connectionString' | 'pool', readonly string[]>> = {
  embedded: ['pglite', 'kysely', 'connectionString', 'pool'],
  pglite: ['kysely', 'connectionString', 'pool'],
  kysely: ['connectionString', 'pool'],
  connectionString: [],
  pool: [],
}

/** The keys of the settings objects among the common fields. */
const NESTED_KEYS: Readonly<Record<string, readonly string[]>> = {
  groupCommit: ['maxBatches', 'maxInFlight'],
  telemetry: ['tracer', 'meter'],
}

/**
 * Refuses a key that is not a field of `shape` (and one in a settings object of {@link NESTED_KEYS}),
 * then parses each known field on its own (so the error names the field even when reading it throws)
 * and returns a shallow copy of `value` with the parsed fields.
 */
function parseFields(
  shape: Readonly<Record<string, z.ZodType<unknown>>>,
  value: object,
  field: string,
  what: string,
): Record<string, unknown> {
  const copy = guardInput(field, () => ({ ...(value as Record<string, unknown>) }))
  checkKnownKeys(copy, Object.keys(shape), field, what)
  for (const [key, keys] of Object.entries(NESTED_KEYS)) {
    checkKeysOfObject(copy[key], keys, `${field}.${key}`, what)
  }
  for (const [key, schema] of Object.entries(shape)) {
    const parsed = parseInput(schema, copy[key], `${field}.${key}`)
    if (parsed !== undefined) copy[key] = parsed
  }
  return copy
}
