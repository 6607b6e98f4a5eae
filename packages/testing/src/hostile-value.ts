import { expect } from '@jest/globals'
import fc from 'fast-check'
import { ERROR_CODES, isTurnlogError } from '@turnlog/core'
import { messageArb, weirdStringArb } from './arbitraries.js'
import { EXOTIC_ANYTHING } from './bad-input-kit.js'

/**
 * What the garbage's callbacks throw: an error of the caller's own code, which a function that runs a
 * callback (withRetry's `fn`, a subscription handler) rightly passes through unchanged.
 */
export class HostileCallbackError extends Error {
  override readonly name = 'HostileCallbackError'
}

/** An object whose every property read, key listing and prototype lookup throws. */
function trapEverything(): unknown {
  const fail = (): never => {
    throw new TypeError('hostile proxy trap')
  }
  return new Proxy(
    {},
    { get: fail, has: fail, ownKeys: fail, getPrototypeOf: fail, getOwnPropertyDescriptor: fail, set: fail, apply: fail },
  )
}

/** A revoked Proxy: every operation on it (even `Array.isArray`) throws a TypeError. */
function revoked(array: boolean): unknown {
  const { proxy, revoke } = Proxy.revocable(array ? [] : {}, {})
  revoke()
  return proxy
}

/** An object whose `key` getter throws (enumerable, so spreading and key walks reach it). */
function throwingGetter(key: string): unknown {
  return Object.defineProperty({}, key, {
    enumerable: true,
    get: () => {
      throw new RangeError(`getter ${key} throws`)
    },
  })
}

const FIELD_NAMES = [
  'id',
  'payload',
  'role',
  'content',
  'createdAt',
  'externalId',
  'scope',
  'status',
  'ephemeral',
  'messages',
  'live',
  'covered',
  'summary',
  'retracted',
  'message',
  'sessionId',
  'seq',
  'eventId',
  'type',
  'messageId',
  'contentHash',
  'data',
  'dataText',
  'payloadText',
  'tool_calls',
  'tool_call_id',
  'call_id',
  'attempts',
  'baseDelayMs',
  'maxDelayMs',
  'onRetry',
  'repairPairing',
  'interruptedContent',
  'maxDepth',
  'at',
  'events',
  'version',
  'length',
  'load',
  'getSession',
  'sessions',
  'transcript',
  'state',
  'maxMessageBytes',
  'knownSessions',
  'groupCommit',
  'migrate',
  'txId',
  'globalPosition',
  'position',
  'all',
  'checks',
  'tenantId',
  'db',
  'flavor',
  'maxBatches',
  'maxInFlight',
  'runGroup',
  // never 'embedded', 'dataDir', 'connectionString', 'pool' or 'kysely': garbage that happened to be valid would open databases
] as const

/**
 * A way to make one garbage value. fast-check cannot hold hostile values itself (it inspects what it
 * generates, and a revoked Proxy throws on inspection), so the arbitraries generate recipes and each
 * run makes fresh values from them.
 */
export interface HostileRecipe {
  /** What the value is, for failure reports. */
  readonly label: string
  /** Makes a fresh value. */
  make(): unknown
}

const plain = (value: unknown): HostileRecipe => ({ label: describeArg(value), make: () => value })

const MAKERS: readonly HostileRecipe[] = [
  { label: 'null', make: () => null },
  { label: 'undefined', make: () => undefined },
  { label: 'NaN', make: () => NaN },
  { label: 'Infinity', make: () => Infinity },
  { label: '-0', make: () => -0 },
  { label: '2^53+1', make: () => 2 ** 53 + 1 },
  { label: '-1', make: () => -1 },
  { label: '10n', make: () => 10n },
  { label: 'a symbol', make: () => Symbol('s') },
  { label: 'Object.create(null)', make: () => Object.create(null) as unknown },
  { label: 'an invalid Date', make: () => new Date(NaN) },
  { label: '[]', make: () => [] },
  { label: '[undefined]', make: () => [undefined] },
  { label: "''", make: () => '' },
  { label: "'abc'", make: () => 'abc' },
  { label: '{}', make: () => ({}) },
  { label: 'a function', make: () => () => 'fn' },
  {
    label: 'a throwing function',
    make: () => () => {
      throw new HostileCallbackError('callback throws')
    },
  },
  {
    label: 'a rejecting async function',
    make: () => async () => {
      throw new HostileCallbackError('async callback rejects')
    },
  },
  { label: 'a Proxy trapping everything', make: trapEverything },
  { label: 'a revoked Proxy', make: () => revoked(false) },
  { label: 'a revoked array Proxy', make: () => revoked(true) },
  { label: 'a throwing payload getter', make: () => throwingGetter('payload') },
  { label: 'a throwing id getter', make: () => throwingGetter('id') },
  { label: 'a throwing role getter', make: () => throwingGetter('role') },
  { label: 'a throwing then getter', make: () => throwingGetter('then') },
  { label: 'a throwing length getter', make: () => throwingGetter('length') },
  { label: '[a Proxy trapping everything]', make: () => [trapEverything()] },
  {
    label: 'a cyclic object',
    make: () => {
      const cyclic: Record<string, unknown> = {}
      cyclic['self'] = cyclic
      return cyclic
    },
  },
  {
    label: '5,000-deep array',
    make: () => {
      let v: unknown = 'deep'
      for (let i = 0; i < 5000; i++) v = [v]
      return v
    },
  },
]

const leafArb: fc.Arbitrary<HostileRecipe> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.anything({ ...EXOTIC_ANYTHING, maxDepth: 2 }).map(plain),
  },
  { weight: 1, arbitrary: weirdStringArb.map(plain) },
  { weight: 3, arbitrary: fc.constantFrom(...MAKERS) },
  { weight: 1, arbitrary: messageArb.map((m): HostileRecipe => ({ label: `message ${m.id}`, make: () => m })) },
)

/**
 * Recipes of garbage for argument-validation properties: `fc.anything` (bigint, Date, Map, Set, typed
 * and sparse arrays, null-prototype and boxed values), `null`, `undefined`, `NaN`, symbols, functions
 * (some throwing), Proxies that throw on every trap, revoked Proxies, objects with throwing getters,
 * cyclic and 5,000-deep values, weird strings, valid messages, arrays of these, and objects whose
 * well-known field names (`id`, `payload`, `messages`, `load`, `maxMessageBytes`, …) hold any of them.
 */
export const hostileValueArb: fc.Arbitrary<HostileRecipe> = fc.oneof(
  { weight: 3, arbitrary: leafArb },
  {
    weight: 1,
    arbitrary: fc
      .array(leafArb, { maxLength: 3 })
      .map((items): HostileRecipe => ({ label: `[${items.map((i) => i.label).join(', ')}]`, make: () => items.map((i) => i.make()) })),
  },
  {
    weight: 2,
    arbitrary: fc.dictionary(fc.constantFrom(...FIELD_NAMES), leafArb, { maxKeys: 4 }).map((o): HostileRecipe => ({
      label: `{ ${Object.entries(o)
        .map(([k, v]) => `${k}: ${v.label}`)
        .join(', ')} }`,
      make: () => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, v.make()])),
    })),
  },
)

/** What a module's export is, for {@link expectEveryExportRejectsGarbage}. */
export type ExportSpec =
  /** A constant, schema or other non-callable value: not called. */
  | { readonly kind: 'value' }
  /** A function taking up to `arity` arguments (the property passes 0 to arity + 1). */
  | { readonly kind: 'function'; readonly arity: number }
  /** A class: constructed with `new` and garbage arguments. */
  | { readonly kind: 'class'; readonly arity: number }

/** The {@link ExportSpec} of a function export called with up to `arity` (+ 1) arguments. */
export const functionExport = (arity: number): ExportSpec => ({ kind: 'function', arity })

/** The {@link ExportSpec} of a class export constructed with up to `arity` (+ 1) arguments. */
export const classExport = (arity: number): ExportSpec => ({ kind: 'class', arity })

/** The {@link ExportSpec} of an export that is not called (a constant, a schema). */
export const VALUE_EXPORT: ExportSpec = { kind: 'value' }

/**
 * Calls every function (and constructs every class) of `module` with garbage arguments from
 * {@link hostileValueArb} and asserts each call either returns (a promise: settles within
 * `timeoutMs`) or throws/rejects with a `TurnlogError` whose code is in the registry: never a raw
 * TypeError, RangeError or any other error (except the error a garbage callback itself throws, which a
 * function running that callback passes through). First checks that `specs` names exactly the module's
 * runtime exports, so a new export without an entry fails the test.
 */
export async function expectEveryExportRejectsGarbage(
  module: Readonly<Record<string, unknown>>,
  specs: Readonly<Record<string, ExportSpec>>,
  options: { readonly numRuns?: number; readonly timeoutMs?: number; readonly skip?: readonly string[] } = {},
): Promise<void> {
  expect(Object.keys(module).sort()).toEqual(Object.keys(specs).sort())
  const failures: string[] = []
  for (const [name, spec] of Object.entries(specs)) {
    if (spec.kind === 'value' || options.skip?.includes(name)) continue
    const target = module[name] as (...args: unknown[]) => unknown
    expect({ name, type: typeof target }).toEqual({ name, type: 'function' })
    const details = await fc.check(
      fc.asyncProperty(fc.array(hostileValueArb, { minLength: 0, maxLength: spec.arity + 1 }), async (recipes) => {
        const args = recipes.map((r) => r.make())
        let outcome: unknown
        try {
          const result = spec.kind === 'class' ? new (target as unknown as new (...a: unknown[]) => unknown)(...args) : target(...args)
          if (result instanceof Promise) {
            let timer: NodeJS.Timeout | undefined
            const timeout = new Promise((resolve) => {
              timer = setTimeout(() => resolve('timeout'), options.timeoutMs ?? 5000)
            })
            try {
              if ((await Promise.race([result, timeout])) === 'timeout')
                throw new Error(`${name} did not settle within ${options.timeoutMs ?? 5000} ms`)
            } finally {
              clearTimeout(timer)
            }
            // a settled-later rejection must not go unhandled
            result.catch(() => {})
          }
          outcome = 'ok'
        } catch (error) {
          // a TurnlogError with a registry code; or a callback's own error, passed through unchanged
          outcome = (isTurnlogError(error) && error.code in ERROR_CODES) || error instanceof HostileCallbackError ? 'turnlog error' : error
        }
        if (outcome !== 'ok' && outcome !== 'turnlog error') {
          throw new Error(`${name}(${recipes.map((r) => r.label).join(', ')}) threw a raw error: ${describeArg(outcome)}`, {
            cause: outcome,
          })
        }
      }),
      { numRuns: options.numRuns ?? 60 },
    )
    if (details.failed)
      failures.push(details.errorInstance instanceof Error ? details.errorInstance.message : `${name}: ${String(details.errorInstance)}`)
  }
  // every failing export at once, each with its shrunk counterexample
  expect(failures).toEqual([])
}

function describeArg(value: unknown): string {
  try {
    if (value instanceof Error) return `${value.name}: ${value.message}`
    if (typeof value === 'bigint' || typeof value === 'symbol' || typeof value === 'function') return typeof value
    const text = JSON.stringify(value)
    return text === undefined ? String(value) : text.slice(0, 120)
  } catch {
    return '(unprintable)'
  }
}
