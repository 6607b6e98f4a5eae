import { afterAll, describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import { createMessage, parseMessage, serializeMessage, toMessage, type Message, type SessionId, type SessionStore } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { SessionModel } from '@turnlog/testing'
import { checkSession, create, expectSameOutcome, newStats, payloadArb, type PayloadSpec } from './support/projection-harness.js'
import { useTestBed } from './support/use-test-bed.js'

// Model-based test (fc.asyncModelRun): an agent loop's append / flush / load / resume against the
// independent SessionModel, on Postgres. Sized for CI: NUM_RUNS command sequences of up to 25 commands.
const NUM_RUNS = Number(process.env['TURNLOG_MODEL_RUNS'] ?? 200)

const stores: PostgresStore[] = []
const stats = newStats()

useTestBed(async (bed) => {
  // three "processes" over one database: a resume switches to another one (cold flush cache)
  for (let i = 0; i < 3; i++) stores.push(await bed.open(bed.db.connectionString, { pool: { max: 2 } }))
})

afterAll(() => {
  console.log(`session-model-run.prop (Postgres): ${JSON.stringify(stats)}`)
})

/** What the test knows: the model, and the agent's in-memory live list (what it would send). */
interface AgentModel {
  readonly model: SessionModel
  readonly sid: SessionId
  /** The runtime's live list, scaffolding included. */
  list: Message[]
  /** Every message the runtime created, for re-sends. */
  readonly created: Message[]
  last: { label: string; batch: readonly Message[]; expectedVersion: number | undefined; flush: boolean } | undefined
}

/** The system under test: the store of the current "process". */
interface AgentReal {
  store: SessionStore
  process: number
}

type AgentCommand = fc.AsyncCommand<AgentModel, AgentReal>

const versionOf = (m: AgentModel, stale: boolean | null): number | undefined => {
  if (stale === null) return undefined
  const v = m.model.version(m.sid) ?? 0
  return stale ? v + 1 : v
}

/** The runtime produces messages (and maybe scaffolding) and appends them directly. */
class AppendCommand implements AgentCommand {
  constructor(
    readonly fresh: readonly PayloadSpec[],
    readonly resend: number | null,
    readonly edit: boolean,
    readonly stale: boolean | null,
  ) {}
  check(): boolean {
    return true
  }
  async run(m: AgentModel, r: AgentReal): Promise<void> {
    const batch = this.fresh.map(create)
    m.created.push(...batch)
    m.list.push(...batch)
    const old = this.resend === null ? undefined : m.created[this.resend % m.created.length]
    // a re-sent earlier message: a JSON copy (a duplicate), or a shallow copy with edited content (a conflict)
    if (old && !batch.includes(old)) {
      batch.unshift(
        this.edit
          ? toMessage({ ...old, payload: { ...old.payload, content: `${String(old.payload.content)}!` } })
          : parseMessage(serializeMessage(old)),
      )
    }
    const expectedVersion = versionOf(m, this.stale)
    const outcome = await expectSameOutcome(
      'append',
      () => m.model.append(m.sid, batch, expectedVersion),
      () => r.store.append(m.sid, batch, expectedVersion === undefined ? {} : { expectedVersion }),
      stats,
    )
    if (outcome.ok) m.last = { label: 'append', batch, expectedVersion, flush: false }
  }
  toString(): string {
    return `append(${this.fresh.length} new${this.resend === null ? '' : `, resend #${this.resend}${this.edit ? ' edited' : ''}`}${this.stale === null ? '' : this.stale ? ', stale version' : ', expectedVersion'})`
  }
}

/** The runtime adds messages (and scaffolding) to its list and flushes the whole list. */
class FlushCommand implements AgentCommand {
  constructor(
    readonly fresh: readonly PayloadSpec[],
    readonly scaffolding: boolean,
    readonly stale: boolean | null,
  ) {}
  check(): boolean {
    return true
  }
  async run(m: AgentModel, r: AgentReal): Promise<void> {
    const fresh = this.fresh.map(create)
    m.created.push(...fresh)
    m.list.push(...fresh)
    if (this.scaffolding) m.list.push(createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true }))
    const list = [...m.list]
    const expectedVersion = versionOf(m, this.stale)
    const outcome = await expectSameOutcome(
      'flush',
      () => m.model.flush(m.sid, list, expectedVersion),
      () => r.store.flush(m.sid, list, expectedVersion === undefined ? {} : { expectedVersion }),
      stats,
    )
    if (outcome.ok) m.last = { label: 'flush', batch: list, expectedVersion, flush: true }
  }
  toString(): string {
    return `flush(+${this.fresh.length}${this.scaffolding ? ', scaffolding' : ''}${this.stale === null ? '' : this.stale ? ', stale version' : ', expectedVersion'})`
  }
}

/** The runtime drops messages from its list (sequence repair, scaffolding removal): the list shrinks. */
class ShrinkCommand implements AgentCommand {
  constructor(readonly keepEvery: number) {}
  check(m: Readonly<AgentModel>): boolean {
    return m.list.length > 1
  }
  async run(m: AgentModel): Promise<void> {
    m.list = m.list.filter((_, i) => i % this.keepEvery !== 0)
  }
  toString(): string {
    return `shrink(drop every ${this.keepEvery}th)`
  }
}

/** The call whose acknowledgement was lost is retried, unchanged. */
class RetryCommand implements AgentCommand {
  check(m: Readonly<AgentModel>): boolean {
    return m.last !== undefined
  }
  async run(m: AgentModel, r: AgentReal): Promise<void> {
    const last = m.last
    if (!last) return
    const opts = last.expectedVersion === undefined ? {} : { expectedVersion: last.expectedVersion }
    await expectSameOutcome(
      `retry ${last.label}`,
      () => (last.flush ? m.model.flush(m.sid, last.batch, last.expectedVersion) : m.model.append(m.sid, last.batch, last.expectedVersion)),
      () => (last.flush ? r.store.flush(m.sid, last.batch, opts) : r.store.append(m.sid, last.batch, opts)),
      stats,
    )
  }
  toString(): string {
    return 'retry last'
  }
}

/** load() equals the model; the runtime resumes from it (optionally in another process). */
class LoadCommand implements AgentCommand {
  constructor(readonly restart: boolean) {}
  check(): boolean {
    return true
  }
  async run(m: AgentModel, r: AgentReal): Promise<void> {
    if (this.restart) {
      r.process = (r.process + 1) % stores.length
      r.store = stores[r.process] as SessionStore
    }
    const expected = m.model.load(m.sid)
    if (!expected.ok) throw new Error('model lost the session')
    const loaded = await r.store.load(m.sid)
    expect(loaded.version).toBe(expected.value.version)
    expect(loaded.messages.map((x) => [x.id, JSON.stringify(x.payload), x.status === 'partial'])).toEqual(
      expected.value.messages.map((x) => [x.id, JSON.stringify(x.payload), x.partial]),
    )
    m.list = [...loaded.messages]
    stats.commands++
    stats.ok[this.toString()] = (stats.ok[this.toString()] ?? 0) + 1
  }
  toString(): string {
    return this.restart ? 'restart + load' : 'load'
  }
}

const staleArb = fc.oneof(
  { weight: 4, arbitrary: fc.constant(null) },
  { weight: 2, arbitrary: fc.constant(false) },
  { weight: 1, arbitrary: fc.constant(true) },
)

const commandsArb = fc.commands(
  [
    fc
      .tuple(
        fc.array(payloadArb, { minLength: 1, maxLength: 3 }),
        fc.option(fc.nat({ max: 50 }), { nil: null, freq: 3 }),
        fc.boolean(),
        staleArb,
      )
      .map(([f, resend, edit, s]) => new AppendCommand(f, resend, edit, s)),
    fc
      .tuple(fc.array(payloadArb, { maxLength: 3 }), fc.boolean(), staleArb)
      .map(([f, scaffolding, s]) => new FlushCommand(f, scaffolding, s)),
    fc.integer({ min: 2, max: 4 }).map((k) => new ShrinkCommand(k)),
    fc.constant(new RetryCommand()),
    fc.boolean().map((restart) => new LoadCommand(restart)),
  ],
  { maxCommands: 25, size: 'medium' },
)

describe('model-based: the agent loop against the session model (Postgres)', () => {
  it('append / flush / shrink / retry / load / resume in another process agree with the model at every step', async () => {
    await fc.assert(
      fc.asyncProperty(commandsArb, async (cmds) => {
        const store = stores[0] as SessionStore
        const sid = await store.createSession()
        const model = new SessionModel()
        model.createSession(sid)
        await fc.asyncModelRun(() => ({ model: { model, sid, list: [], created: [], last: undefined }, real: { store, process: 0 } }), cmds)
        await checkSession(store, model, sid, stats)
        stats.histories++
      }),
      { numRuns: NUM_RUNS },
    )
  }, 600_000)
})
