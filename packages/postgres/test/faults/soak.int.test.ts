/**
 * A bounded soak: several workers run a mixed agent workload (append, flush with scaffolding, rewind,
 * compact, revise, streaming with finalize, fork, rebuild, load) over many sessions while a fault
 * injector terminates backends and cuts or half-commits connections through a loopback proxy. Every
 * retry goes through `withRetry`; ambiguous outcomes are resolved the way docs/guarantees.md says. At
 * the end every projection must match its log (`rebuild({ verify: true })`), and an independent
 * ledger of what the workers were acknowledged must match the store: 0 lost, 0 duplicated.
 *
 * 30 s in CI (the test command's time is bounded); `TURNLOG_SOAK_SECONDS=600` for a longer local run, `TURNLOG_SOAK_SEED` to replay a mix.
 */
import { describe, expect, it } from '@jest/globals'
import { randomUUID } from 'node:crypto'
import { createMessage, isTurnlogError, type ChatMessage, type Message, type SessionId } from '@turnlog/core'
import { openStore, withRetry, type PostgresStore, type RetryOptions } from '@turnlog/postgres'
import { Ledger, type TcpProxy, type TestDatabase } from '@turnlog/testing'
import { BackendKiller, auditProblems, seededRandom, sleep, startProxyTo } from './support/fault-helpers.js'
import { useTestBed } from '../support/use-test-bed.js'

const SECONDS = Number(process.env['TURNLOG_SOAK_SECONDS'] ?? 30)
const SEED = Number(process.env['TURNLOG_SOAK_SEED'] ?? Math.floor(Math.random() * 2 ** 31))
const WORKERS = 4
const SESSIONS_PER_WORKER = 6
const MAX_SESSIONS_PER_WORKER = 14

let db: TestDatabase
let direct: PostgresStore
let proxy: TcpProxy

useTestBed(async (bed) => {
  db = bed.db
  direct = await bed.admin()
  proxy = await startProxyTo(db.connectionString)
  bed.defer(() => proxy.close())
})

/** Counters the workers and the injector share. */
class Figures {
  readonly ops = new Map<string, number>()
  readonly faults = new Map<string, number>()
  retries = 0
  /** Retries whose call found its first attempt had committed (ack lost). */
  ambiguousResolved = 0
  messages = 0

  op(name: string): void {
    this.ops.set(name, (this.ops.get(name) ?? 0) + 1)
  }

  fault(name: string, n = 1): void {
    this.faults.set(name, (this.faults.get(name) ?? 0) + n)
  }

  total(map: Map<string, number>): number {
    return [...map.values()].reduce((a, b) => a + b, 0)
  }
}

/** One session as the worker that owns it sees it: the agent's in-memory live list. */
interface OwnedSession {
  readonly id: SessionId
  live: Message[]
}

const text = (m: Message): string => (typeof m.payload.content === 'string' ? m.payload.content : '')

async function worker(index: number, deadline: number, ledger: Ledger, figures: Figures): Promise<void> {
  const random = seededRandom(SEED + index)
  const store = await withRetry(() => openStore({ connectionString: proxy.url(db.connectionString), migrate: false, pool: { max: 3 } }), {
    attempts: 50,
    baseDelayMs: 20,
  })
  let counter = 0
  let transientInCall = false
  const retry: RetryOptions = {
    attempts: 60,
    baseDelayMs: 10,
    maxDelayMs: 250,
    onRetry: () => {
      figures.retries++
      transientInCall = true
    },
  }
  /** withRetry that remembers whether the call saw a DB_TRANSIENT (then its outcome was ambiguous). */
  const call = async <T>(fn: () => Promise<T>): Promise<T> => {
    transientInCall = false
    return withRetry(fn, retry)
  }
  const fresh = (role: 'user' | 'assistant' | 'system', extra: Partial<ChatMessage> = {}, status?: 'partial'): Message =>
    createMessage(
      { role, content: `w${index}-${counter++} ${'·'.repeat(random.int(0, 400))}`, ...extra } as ChatMessage,
      status === undefined ? {} : { status },
    )
  const owned: OwnedSession[] = []
  for (let i = 0; i < SESSIONS_PER_WORKER; i++) {
    const id = randomUUID()
    await call(() => store.createSession({ id, metadata: { worker: index } }))
    ledger.created(id)
    owned.push({ id: id as SessionId, live: [] })
  }

  try {
    while (Date.now() < deadline) {
      const s = random.pick(owned)
      const roll = random.next()
      if (roll < 0.3) {
        // flush: a turn adds a user message, maybe a tool call pair, a reply, and scaffolding
        const callId = `call_${counter}`
        const turn = [fresh('user')]
        if (random.next() < 0.4) {
          turn.push(
            createMessage({
              role: 'assistant',
              content: '',
              tool_calls: [{ id: callId, type: 'function', function: { name: 'read', arguments: '{}' } }],
            }),
            createMessage({ role: 'tool', tool_call_id: callId, content: `result ${counter++}` }),
          )
        }
        turn.push(fresh('assistant'))
        const nudge = createMessage({ role: 'user', content: 'please continue' }, { ephemeral: true })
        const list = [...s.live, ...turn.slice(0, 1), nudge, ...turn.slice(1)]
        const result = await call(() => store.flush(s.id, list))
        if (transientInCall && turn.some((m) => !result.appended.includes(m.id))) figures.ambiguousResolved++
        ledger.appended(s.id, turn)
        s.live = [...s.live, ...turn] // scaffolding dropped after the turn
        figures.messages += turn.length
        figures.op('flush')
      } else if (roll < 0.5) {
        const batch = Array.from({ length: random.int(1, 5) }, (_, i) => fresh(i % 2 === 0 ? 'user' : 'assistant'))
        const result = await call(() => store.append(s.id, batch))
        if (transientInCall && result.duplicates.length > 0) figures.ambiguousResolved++
        ledger.appended(s.id, batch)
        s.live.push(...batch)
        figures.messages += batch.length
        figures.op('append')
      } else if (roll < 0.58) {
        if (s.live.length < 3) continue
        // rewind the tail after a target in the second half, conditional on the version we saw
        const at = random.int(Math.floor(s.live.length / 2), s.live.length - 2)
        const target = s.live[at] as Message
        const { version } = await call(() => store.getSession(s.id))
        const expectedIds = s.live.slice(at + 1).map((m) => m.id)
        let retracted: readonly string[]
        try {
          retracted = (await call(() => store.rewind(s.id, { after: target.id }, { expectedVersion: version, reason: 'retry' }))).retracted
        } catch (error) {
          // a replay of a rewind that committed (ack lost) is refused: the version moved by exactly one
          if (!transientInCall || !isTurnlogError(error, 'VERSION_CONFLICT') || error.details['actualVersion'] !== version + 1) throw error
          figures.ambiguousResolved++
          retracted = expectedIds
        }
        expect(retracted).toEqual(expectedIds)
        ledger.retracted(s.id, retracted)
        s.live = s.live.slice(0, at + 1)
        figures.op('rewind')
      } else if (roll < 0.66) {
        if (s.live.length < 6) continue
        let n = random.int(2, 4)
        // never split a tool call from its result: the audit would rightly report an orphan result
        while (n < s.live.length && s.live[n]?.payload.role === 'tool') n++
        if (n >= s.live.length) continue
        const covered = s.live.slice(0, n)
        const summary = createMessage({ role: 'system', content: `summary ${counter++} of ${covered.length} messages` })
        await call(() => store.compact(s.id, { covered: covered.map((m) => m.id), summary, reason: 'soak' }))
        ledger.compacted(
          s.id,
          covered.map((m) => m.id),
          [summary],
        )
        s.live = [summary, ...s.live.slice(covered.length)]
        figures.messages++
        figures.op('compact')
      } else if (roll < 0.76) {
        if (s.live.length === 0) continue
        const i = random.int(0, s.live.length - 1)
        const old = s.live[i] as Message
        if (old.status === 'partial') continue
        const payload = { ...old.payload, content: `${text(old)} [note ${counter++}]` } as ChatMessage
        await call(() => store.revise(s.id, old.id, payload))
        ledger.revised(s.id, old.id, payload)
        s.live[i] = createMessage(payload, { id: old.id, createdAt: old.createdAt })
        figures.op('revise')
      } else if (roll < 0.82) {
        // streaming: a partial reply, revised while it streams, then finalized with its last content
        const partial = fresh('assistant', {}, 'partial')
        await call(() => store.append(s.id, [partial]))
        ledger.appended(s.id, [partial])
        const more = { ...partial.payload, content: `${text(partial)} and more` } as ChatMessage
        await call(() => store.revise(s.id, partial.id, more, { status: 'partial' }))
        ledger.revised(s.id, partial.id, more, 'partial')
        const done = { ...more, content: `${String(more.content)}. Done.` } as ChatMessage
        await call(() => store.finalize(s.id, partial.id, done))
        ledger.revised(s.id, partial.id, done)
        s.live.push(createMessage(done, { id: partial.id, createdAt: partial.createdAt }))
        figures.messages++
        figures.op('stream')
      } else if (roll < 0.86) {
        if (owned.length >= MAX_SESSIONS_PER_WORKER || s.live.length < 2) continue
        const at = s.live[random.int(0, s.live.length - 1)] as Message
        const child = randomUUID()
        await call(() => store.fork(s.id, { at: at.id, id: child }))
        ledger.forked(s.id, child, at.id)
        owned.push({ id: child as SessionId, live: s.live.slice(0, s.live.indexOf(at) + 1) })
        figures.op('fork')
      } else if (roll < 0.88) {
        await call(() => store.rebuild({ sessionId: s.id }))
        figures.op('rebuild')
      } else {
        const loaded = await call(() => store.load(s.id))
        expect(loaded.messages.map((m) => m.id)).toEqual(ledger.live(s.id))
        figures.op('load')
      }
    }
  } finally {
    await store.close()
  }
}

async function injectFaults(until: () => boolean, killer: BackendKiller, figures: Figures): Promise<void> {
  const random = seededRandom(SEED ^ 0x5eed)
  while (!until()) {
    await sleep(random.int(80, 400))
    const roll = random.next()
    if (roll < 0.2) figures.fault('terminate all backends', await killer.all())
    else if (roll < 0.45) figures.fault('terminate one backend', await killer.one(random.next()))
    else if (roll < 0.6) figures.fault('proxy cut (fin/rst)', proxy.cutAll(random.next() < 0.5 ? 'fin' : 'rst'))
    else if (!proxy.armed) {
      const kind = roll < 0.8 ? 'ack-lost' : 'commit-lost'
      void proxy.arm({ kind, close: random.next() < 0.5 ? 'fin' : 'rst' }).then(() => figures.fault(`proxy ${kind}`))
    }
  }
  proxy.disarm()
}

describe(`soak: ${SECONDS} s of mixed operations under injected faults`, () => {
  it(
    'ends with no projection drift and a store that matches the ledger: 0 lost, 0 duplicated',
    async () => {
      // given
      const ledger = new Ledger()
      const figures = new Figures()
      const killer = await BackendKiller.connect(db.name)
      const started = Date.now()
      const deadline = started + SECONDS * 1000
      let faultsOn = true

      // when
      const injector = injectFaults(() => !faultsOn, killer, figures)
      try {
        await Promise.all(Array.from({ length: WORKERS }, (_, i) => worker(i, deadline, ledger, figures)))
      } finally {
        faultsOn = false
        await injector
        await killer.close()
      }
      const elapsed = (Date.now() - started) / 1000

      // then
      const rebuild = await direct.rebuild({ verify: true })
      const report = await ledger.verify(direct)
      let conflicts = 0
      for (const id of ledger.sessionIds) conflicts += (await direct.conflicts(id)).length
      const audited = await auditProblems(direct)
      const faults = figures.total(figures.faults)
      console.log(
        [
          `soak (seed ${SEED}): ${elapsed.toFixed(0)} s, ${WORKERS} workers, ${report.sessions} sessions, ${figures.total(figures.ops)} operations, ${figures.messages} messages written, ${report.events} events`,
          `  operations: ${[...figures.ops].map(([k, n]) => `${k} ${n}`).join(', ')}`,
          `  faults injected: ${faults} (${[...figures.faults].map(([k, n]) => `${k} ${n}`).join(', ')})`,
          `  DB_TRANSIENT retries: ${figures.retries}; calls whose retry found the first attempt committed: ${figures.ambiguousResolved}`,
          `  lost: ${report.lost}, duplicated: ${report.duplicated}, phantom: ${report.phantom}, out of order: ${report.outOfOrder}, ` +
            `live mismatches: ${report.liveMismatches}, broken chains: ${report.brokenChains}, projection drift: ${rebuild.drift.length}, conflicts: ${conflicts}`,
          `  audit({ all: true }): ${audited.sessions} sessions, ${audited.problems.length} errors or worse; below that: ${audited.warnings}`,
        ].join('\n'),
      )
      expect(report.problems).toEqual([])
      expect(report).toMatchObject({ lost: 0, duplicated: 0, phantom: 0, outOfOrder: 0, liveMismatches: 0, brokenChains: 0 })
      expect(rebuild.drift).toEqual([])
      expect(rebuild.sessions).toBe(report.sessions)
      expect(conflicts).toBe(0)
      expect(audited.problems).toEqual([])
      expect(audited.sessions).toBe(report.sessions)
      // the run really was under fire
      expect(faults).toBeGreaterThanOrEqual(SECONDS / 2)
      expect(figures.faults.get('proxy ack-lost') ?? 0).toBeGreaterThan(0)
      expect(figures.retries).toBeGreaterThan(0)
    },
    (SECONDS + 120) * 1000,
  )
})
