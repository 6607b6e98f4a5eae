/**
 * Random command histories for the projection property tests: a fast-check arbitrary of commands
 * (append, flush, rewind, compact, revise, finalize, fork, and retries of a call whose acknowledgement
 * was "lost"), a runner that applies each command to a store AND to the independent `SessionModel`, and
 * the end-of-history checks: inline projection (`load`) = `rebuild` verify (no drift) = pure fold
 * (`foldSession(events)`) = model, and `load({ at: v })` = the model at every version v.
 */
import { expect } from '@jest/globals'
import fc from 'fast-check'
import {
  contentHash,
  createMessage,
  foldSession,
  isTurnlogError,
  liveMessages,
  newSessionId,
  toMessage,
  toolPairing,
  type ChatMessage,
  type Message,
  type MessageId,
  type SessionId,
  type SessionStore,
  type StoredEvent,
} from '@turnlog/core'
import { SessionModel, type ModelMessage, type ModelOutcome } from '@turnlog/testing'

/** How a write states `expectedVersion`: not at all, the current version, or a wrong one. */
export type ExpectSpec = 'none' | 'current' | 'stale'

/** The content of a message the command creates. */
export interface PayloadSpec {
  readonly role: 'user' | 'assistant' | 'tool'
  readonly text: string
  /** assistant: the tool call ids it makes; tool: the first is the call it answers. */
  readonly calls: readonly string[]
  readonly partial: boolean
}

/** One element of an append batch. */
export type ItemSpec =
  | { readonly kind: 'new'; readonly payload: PayloadSpec }
  /** A message created earlier in the history (any session), re-sent as is or with edited content. */
  | { readonly kind: 'old'; readonly pick: number; readonly edit: boolean }
  | { readonly kind: 'ephemeral' }

/** One command of a history. `session` and `pick` are indexes taken modulo what exists. */
export type Command =
  | {
      readonly kind: 'append'
      readonly session: number
      readonly writer: number
      readonly items: readonly ItemSpec[]
      readonly expect: ExpectSpec
    }
  | {
      readonly kind: 'flush'
      readonly session: number
      readonly writer: number
      readonly fresh: readonly PayloadSpec[]
      readonly nudge: boolean
      readonly expect: ExpectSpec
    }
  | {
      readonly kind: 'rewind'
      readonly session: number
      readonly pick: number
      readonly mode: 'after' | 'from'
      readonly expect: ExpectSpec
    }
  | {
      readonly kind: 'compact'
      readonly session: number
      readonly picks: readonly number[]
      readonly summaries: readonly PayloadSpec[]
      readonly expect: ExpectSpec
      /** `allowSplitToolPairs`: record a compaction that splits a tool-call pair (as an importer does) instead of refusing it. */
      readonly allowSplit: boolean
    }
  | {
      readonly kind: 'revise'
      readonly session: number
      readonly pick: number
      readonly text: string
      readonly partial: boolean
      readonly expect: ExpectSpec
    }
  | {
      readonly kind: 'finalize'
      readonly session: number
      readonly pick: number
      readonly text: string | null
      readonly expect: ExpectSpec
    }
  | { readonly kind: 'fork'; readonly session: number; readonly pick: number }
  | { readonly kind: 'retry' }

const textArb: fc.Arbitrary<string> = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('ok', 'yes', 'a', 'b', 'done', '') },
  { weight: 1, arbitrary: fc.constantFrom('nul \u0000', 'lone \ud800', '😀 astral', 'שלום') },
)
const callIdArb = fc.constantFrom('c1', 'c2', 'c3')

/** Message contents: a few roles, a small text alphabet (so equal contents recur), some hostile strings. */
export const payloadArb: fc.Arbitrary<PayloadSpec> = fc
  .record({
    role: fc.constantFrom('user', 'assistant', 'tool'),
    text: textArb,
    calls: fc.array(callIdArb, { minLength: 0, maxLength: 2 }),
    partial: fc.boolean(),
  })
  .map((p) => ({
    ...p,
    calls: p.role === 'user' ? [] : p.role === 'tool' && p.calls.length === 0 ? ['c1'] : p.calls,
    partial: p.role === 'assistant' && p.partial,
  }))

const expectArb: fc.Arbitrary<ExpectSpec> = fc.oneof(
  { weight: 5, arbitrary: fc.constant<ExpectSpec>('none') },
  { weight: 2, arbitrary: fc.constant<ExpectSpec>('current') },
  { weight: 1, arbitrary: fc.constant<ExpectSpec>('stale') },
)
const sessionArb = fc.nat({ max: 3 })
const pickArb = fc.nat({ max: 255 })
const writerArb = fc.nat({ max: 1 })

const itemArb: fc.Arbitrary<ItemSpec> = fc.oneof(
  { weight: 20, arbitrary: payloadArb.map((payload): ItemSpec => ({ kind: 'new', payload })) },
  {
    weight: 4,
    arbitrary: fc.record({ pick: pickArb, edit: fc.boolean() }).map(({ pick, edit }): ItemSpec => ({ kind: 'old', pick, edit })),
  },
  { weight: 1, arbitrary: fc.constant<ItemSpec>({ kind: 'ephemeral' }) },
)

/** Commands, weighted so that most writes succeed and every operation and error path is reached. */
export const commandArb: fc.Arbitrary<Command> = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record({
      kind: fc.constant('append' as const),
      session: sessionArb,
      writer: writerArb,
      items: fc.array(itemArb, { minLength: 1, maxLength: 4 }),
      expect: expectArb,
    }),
  },
  {
    weight: 5,
    arbitrary: fc.record({
      kind: fc.constant('flush' as const),
      session: sessionArb,
      writer: writerArb,
      fresh: fc.array(payloadArb, { maxLength: 3 }),
      nudge: fc.boolean(),
      expect: expectArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('rewind' as const),
      session: sessionArb,
      pick: pickArb,
      mode: fc.constantFrom('after' as const, 'from' as const),
      expect: expectArb,
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('compact' as const),
      session: sessionArb,
      picks: fc.array(pickArb, { minLength: 1, maxLength: 3 }),
      summaries: fc.array(payloadArb, { minLength: 1, maxLength: 2 }),
      expect: expectArb,
      allowSplit: fc.boolean(),
    }),
  },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant('revise' as const),
      session: sessionArb,
      pick: pickArb,
      text: textArb,
      partial: fc.boolean(),
      expect: expectArb,
    }),
  },
  {
    weight: 1,
    arbitrary: fc.record({
      kind: fc.constant('finalize' as const),
      session: sessionArb,
      pick: pickArb,
      text: fc.option(textArb, { nil: null }),
      expect: expectArb,
    }),
  },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant('fork' as const), session: sessionArb, pick: pickArb }) },
  { weight: 1, arbitrary: fc.constant<Command>({ kind: 'retry' }) },
)

/** A history: a short list of commands on a fresh root session, which starts with a few messages. */
export const historyArb: fc.Arbitrary<Command[]> = fc
  .tuple(fc.array(payloadArb, { minLength: 1, maxLength: 4 }), fc.array(commandArb, { minLength: 1, maxLength: 14 }))
  .map(([first, rest]): Command[] => [{ kind: 'flush', session: 0, writer: 0, fresh: first, nudge: false, expect: 'none' }, ...rest])

function toPayload(spec: PayloadSpec): ChatMessage {
  switch (spec.role) {
    case 'user':
      return { role: 'user', content: spec.text }
    case 'tool':
      return { role: 'tool', tool_call_id: spec.calls[0] ?? 'c1', content: spec.text }
    case 'assistant':
      return spec.calls.length === 0
        ? { role: 'assistant', content: spec.text }
        : {
            role: 'assistant',
            content: spec.text,
            tool_calls: spec.calls.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } })),
          }
  }
}

/** A new message from a spec. */
export function create(spec: PayloadSpec): Message {
  return createMessage(toPayload(spec), spec.partial ? { status: 'partial' } : {})
}

/** A loaded-looking copy of a model message (what a resumed runtime holds). */
export function fromModel(m: ModelMessage): Message {
  return toMessage({
    id: m.id,
    payload: m.payload,
    createdAt: m.createdAt,
    ...(m.externalId === undefined ? {} : { externalId: m.externalId }),
    ...(m.partial ? { status: 'partial' } : {}),
  })
}

/** The comparable shape of a live message. */
function shape(
  m: { readonly id: string; readonly payload: unknown; readonly createdAt: string; readonly externalId?: string | undefined },
  partial: boolean,
): unknown {
  return { id: m.id, payload: JSON.stringify(m.payload), createdAt: m.createdAt, externalId: m.externalId, partial }
}

/** Statistics over many histories, to show what the generator reached. */
export interface HarnessStats {
  histories: number
  commands: number
  versionsChecked: number
  ok: Record<string, number>
  errors: Record<string, number>
}

/** A fresh statistics object. */
export function newStats(): HarnessStats {
  return { histories: 0, commands: 0, versionsChecked: 0, ok: {}, errors: {} }
}

/**
 * Runs one call on the model and on the store and asserts they agree: the same value, or an error whose
 * code is one the model allows. Counts the outcome in `stats` and returns the model's outcome.
 */
export async function expectSameOutcome<T>(
  label: string,
  onModel: () => ModelOutcome<T>,
  onStore: () => Promise<unknown>,
  stats: HarnessStats,
  /** Besides the model's, a version the store may also report (a no-op flush: the version it last saw). */
  alsoAllowedVersion?: (value: T) => number | undefined,
  /** Called with what the store returned, when it succeeded. */
  onStoreValue?: (value: unknown) => void,
): Promise<ModelOutcome<T>> {
  const expected = onModel()
  let actual: { ok: true; value: unknown } | { ok: false; error: unknown }
  try {
    actual = { ok: true, value: await onStore() }
  } catch (error) {
    actual = { ok: false, error }
  }
  stats.commands++
  if (expected.ok) {
    if (!actual.ok)
      throw new Error(`${label}: the model succeeds with ${JSON.stringify(expected.value)}, the store failed`, { cause: actual.error })
    onStoreValue?.(actual.value)
    let value = actual.value
    const also = alsoAllowedVersion?.(expected.value)
    const reported = (value as { version?: unknown }).version
    const modelVersion = (expected.value as { version?: unknown }).version
    if (also !== undefined && reported === also && reported !== modelVersion) {
      value = { ...(value as object), version: modelVersion }
      stats.ok[`${label} (last seen version)`] = (stats.ok[`${label} (last seen version)`] ?? 0) + 1
    }
    expect({ call: label, value }).toEqual({ call: label, value: expected.value })
    stats.ok[label] = (stats.ok[label] ?? 0) + 1
  } else {
    if (actual.ok)
      throw new Error(`${label}: the model fails with ${expected.codes.join('|')}, the store returned ${JSON.stringify(actual.value)}`)
    if (!isTurnlogError(actual.error)) throw actual.error
    expect({ call: label, code: actual.error.code, allowed: expected.codes.includes(actual.error.code) }).toEqual({
      call: label,
      code: actual.error.code,
      allowed: true,
    })
    stats.errors[`${label}:${actual.error.code}`] = (stats.errors[`${label}:${actual.error.code}`] ?? 0) + 1
  }
  return expected
}

type Call = {
  readonly label: string
  readonly store: () => Promise<unknown>
  readonly model: () => ModelOutcome<unknown>
  /** The store instance (writer index) and session, for the versions that instance has seen. */
  readonly writer: number
  readonly sid: SessionId
  /** A flush without expectedVersion: when it writes nothing it may report the version the writer last saw. */
  readonly noopMayBeStale?: boolean
}

/**
 * Runs one history against `stores` (index = writer; all share one database) and a fresh model, and
 * checks every call's outcome against the model, then every session's projection, rebuild, fold and
 * time travel. Throws (via `expect`) on the first disagreement.
 */
export async function runHistory(stores: readonly SessionStore[], commands: readonly Command[], stats: HarnessStats): Promise<void> {
  const main = stores[0]
  if (!main) throw new Error('no store')
  const model = new SessionModel()
  const root = await main.createSession()
  model.createSession(root)
  const sessions: SessionId[] = [root]
  const pool: Message[] = []
  let lastWrite: Call | undefined

  const sessionOf = (i: number): SessionId => sessions[i % sessions.length] as SessionId
  const expectedOf = (sid: SessionId, spec: ExpectSpec): number | undefined => {
    const v = model.version(sid) ?? 0
    return spec === 'none' ? undefined : spec === 'current' ? v : v === 0 ? 1 : v - 1
  }
  const liveOf = (sid: SessionId): readonly ModelMessage[] => {
    const loaded = model.load(sid)
    return loaded.ok ? loaded.value.messages : []
  }
  /** Mostly a live message of the session; one pick in eight is any message created so far, or a stranger. */
  const candidate = (sid: SessionId, pick: number): MessageId => {
    const live = liveOf(sid).map((m) => m.id)
    if (pick % 8 !== 0 && live.length > 0) return live[Math.floor(pick / 8) % live.length] as MessageId
    const any = [...pool.map((m) => m.id), '0190f0f0-0000-7000-8000-000000000001' as MessageId]
    return any[Math.floor(pick / 8) % any.length] as MessageId
  }
  const writer = (i: number): SessionStore => stores[i % stores.length] as SessionStore

  // The highest version each store instance has seen per session (from its own calls' results): a flush
  // of messages that instance knows durable may report it instead of the current one (docs/guarantees.md).
  const seen = new Map<string, number>()
  const compare = async (call: Call): Promise<ModelOutcome<unknown>> => {
    const key = `${call.writer % stores.length}:${call.sid}`
    const lastSeen = (value: unknown): number | undefined =>
      call.noopMayBeStale === true && (value as { appended?: readonly unknown[] }).appended?.length === 0 ? seen.get(key) : undefined
    return expectSameOutcome(call.label, call.model, call.store, stats, lastSeen, (value) => {
      const version = (value as { version?: unknown }).version
      if (typeof version === 'number' && version > (seen.get(key) ?? -1)) seen.set(key, version)
    })
  }

  for (const c of commands) {
    let call: Call
    switch (c.kind) {
      case 'append': {
        const sid = sessionOf(c.session)
        const batch: Message[] = []
        for (const item of c.items) {
          if (item.kind === 'new') {
            const m = create(item.payload)
            pool.push(m)
            batch.push(m)
          } else if (item.kind === 'ephemeral') {
            batch.push(createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true }))
          } else {
            const old = pool[item.pick % Math.max(1, pool.length)]
            if (!old || batch.some((b) => b.id === old.id)) continue
            batch.push(
              item.edit
                ? toMessage({ ...old, payload: { ...old.payload, content: `${String(old.payload.content)} (edited)` } })
                : toMessage({ ...old }),
            )
          }
        }
        const expectedVersion = expectedOf(sid, c.expect)
        const store = writer(c.writer)
        call = {
          label: 'append',
          store: () => store.append(sid, batch, expectedVersion === undefined ? {} : { expectedVersion }),
          model: () => model.append(sid, batch, expectedVersion),
          writer: c.writer,
          sid,
        }
        break
      }
      case 'flush': {
        const sid = sessionOf(c.session)
        const fresh = c.fresh.map(create)
        pool.push(...fresh)
        const list = [...liveOf(sid).map(fromModel), ...fresh]
        if (c.nudge) list.splice(Math.floor(list.length / 2), 0, createMessage({ role: 'user', content: '(empty)' }, { ephemeral: true }))
        const expectedVersion = expectedOf(sid, c.expect)
        const store = writer(c.writer)
        call = {
          label: 'flush',
          store: () => store.flush(sid, list, expectedVersion === undefined ? {} : { expectedVersion }),
          model: () => model.flush(sid, list, expectedVersion),
          writer: c.writer,
          sid,
          noopMayBeStale: expectedVersion === undefined,
        }
        break
      }
      case 'rewind': {
        const sid = sessionOf(c.session)
        const target = candidate(sid, c.pick)
        const t = c.mode === 'after' ? { after: target } : { from: target }
        const expectedVersion = expectedOf(sid, c.expect)
        call = {
          label: 'rewind',
          store: () => main.rewind(sid, t, expectedVersion === undefined ? {} : { expectedVersion }),
          model: () => model.rewind(sid, t, expectedVersion),
          writer: 0,
          sid,
        }
        break
      }
      case 'compact': {
        const sid = sessionOf(c.session)
        const covered = [...new Set(c.picks.map((p) => candidate(sid, p)))]
        const summary = c.summaries.map((s) => create({ ...s, text: `[CONTEXT COMPACTION] ${s.text}` }))
        pool.push(...summary)
        const expectedVersion = expectedOf(sid, c.expect)
        call = {
          label: 'compact',
          store: () =>
            main.compact(sid, {
              covered,
              summary,
              ...(expectedVersion === undefined ? {} : { expectedVersion }),
              ...(c.allowSplit ? { allowSplitToolPairs: true } : {}),
            }),
          model: () => model.compact(sid, covered, summary, expectedVersion, c.allowSplit),
          writer: 0,
          sid,
        }
        break
      }
      case 'revise': {
        const sid = sessionOf(c.session)
        const id = candidate(sid, c.pick)
        const current = liveOf(sid).find((m) => m.id === id)
        // keep the role (and pairing fields) of the message; change the content
        const payload: ChatMessage = current ? { ...current.payload, content: c.text } : { role: 'user', content: c.text }
        const status = c.partial ? ('partial' as const) : ('final' as const)
        const expectedVersion = expectedOf(sid, c.expect)
        call = {
          label: 'revise',
          store: () => main.revise(sid, id, payload, { status, ...(expectedVersion === undefined ? {} : { expectedVersion }) }),
          model: () => model.revise(sid, id, payload, status, expectedVersion),
          writer: 0,
          sid,
        }
        break
      }
      case 'finalize': {
        const sid = sessionOf(c.session)
        const id = candidate(sid, c.pick)
        const current = liveOf(sid).find((m) => m.id === id)
        const payload: ChatMessage | undefined =
          c.text === null ? undefined : current ? { ...current.payload, content: c.text } : { role: 'assistant', content: c.text }
        const expectedVersion = expectedOf(sid, c.expect)
        call = {
          label: 'finalize',
          store: () => main.finalize(sid, id, payload, expectedVersion === undefined ? {} : { expectedVersion }),
          model: () => model.finalize(sid, id, payload, expectedVersion),
          writer: 0,
          sid,
        }
        break
      }
      case 'fork': {
        const sid = sessionOf(c.session)
        const at = candidate(sid, c.pick)
        const child = newSessionId()
        call = {
          label: 'fork',
          store: () => main.fork(sid, { at, id: child }),
          model: () => model.fork(sid, at, child),
          writer: 0,
          sid,
        }
        break
      }
      case 'retry': {
        if (!lastWrite) continue
        const again = lastWrite
        call = { ...again, label: `retry ${again.label}` }
        break
      }
    }
    const outcome = await compare(call)
    if (outcome.ok && c.kind === 'fork') sessions.push(outcome.value as SessionId)
    if (outcome.ok && (c.kind === 'append' || c.kind === 'flush' || c.kind === 'compact')) lastWrite = call
  }

  for (const sid of sessions) await checkSession(main, model, sid, stats, stores.slice(1))
  stats.histories++
}

/**
 * load = model; rebuild verify = no drift; fold(events) = load; load({ at: v }) = model at v for every v;
 * and `load` through each of `others` (another store on the same database, e.g. one reading with the
 * prepared statement of `directConnection`) = load.
 */
export async function checkSession(
  store: SessionStore,
  model: SessionModel,
  sid: SessionId,
  stats: HarnessStats,
  others: readonly SessionStore[] = [],
): Promise<void> {
  const expected = model.load(sid)
  if (!expected.ok) throw new Error(`model has no session ${sid}`)
  const modelShape = (messages: readonly ModelMessage[]): unknown[] => messages.map((m) => shape(m, m.partial))

  const loaded = await store.load(sid)
  expect({ sid, version: loaded.version, live: loaded.messages.map((m) => shape(m, m.status === 'partial')) }).toEqual({
    sid,
    version: expected.value.version,
    live: modelShape(expected.value.messages),
  })
  // a load's ids are distinct (its pairing skips the copies check): its pairing is the public one's
  expect(new Set(loaded.messages.map((m) => m.id)).size).toBe(loaded.messages.length)
  expect(loaded.pairing).toEqual(toolPairing(loaded.messages))

  const full = (messages: readonly Message[]): unknown[] =>
    messages.map((m) => [m.id, m.payload, m.createdAt, m.status, m.externalId, m.format, m.meta, contentHash(m)])
  for (const other of others) {
    const again = await other.load(sid)
    expect({ sid, version: again.version, live: full(again.messages) }).toEqual({
      sid,
      version: loaded.version,
      live: full(loaded.messages),
    })
    expect(again.pairing).toEqual(loaded.pairing)
  }

  const { drift } = await store.rebuild({ sessionId: sid, verify: true })
  expect(drift).toEqual([])

  const events: StoredEvent[] = []
  for await (const e of store.events(sid)) events.push(e)
  const folded = foldSession(events)
  expect(folded.version).toBe(loaded.version)
  expect(folded.anomalies).toEqual([])
  expect(liveMessages(folded).map((m) => shape(m, m.status === 'partial'))).toEqual(
    loaded.messages.map((m) => shape(m, m.status === 'partial')),
  )

  const info = await store.getSession(sid)
  expect({ version: info.version, liveCount: info.liveCount, parent: info.parent }).toEqual({
    version: expected.value.version,
    liveCount: expected.value.messages.length,
    parent: model.parent(sid) ?? null,
  })

  const versions = Array.from({ length: expected.value.version + 1 }, (_, v) => v)
  const travelled = await Promise.all(versions.map((at) => store.load(sid, { at })))
  for (const [at, past] of travelled.entries()) {
    const then = model.load(sid, at)
    if (!then.ok) throw new Error(`model cannot load ${sid} at ${at}`)
    expect({ sid, at, version: past.version, live: past.messages.map((m) => shape(m, m.status === 'partial')) }).toEqual({
      sid,
      at,
      version: at,
      live: modelShape(then.value.messages),
    })
  }
  stats.versionsChecked += versions.length
}
