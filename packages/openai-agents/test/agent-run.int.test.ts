/**
 * End to end: the Agents SDK's `run()` of an agent with a tool against a scripted model (a `Model`
 * implementation, `FakeModel`), with `session: new TurnlogSession(...)`, on Postgres and PGlite. Then
 * the failures the session exists for, on Postgres through a TCP proxy that cuts the connection right
 * after the server committed (`ack-lost`: the client sees `DB_TRANSIENT` for a write that landed): the
 * retry leaves one copy of every item and the audit is clean. And concurrent writers: two sessions
 * written at once lose and duplicate nothing.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import {
  Agent,
  OutputGuardrailTripwireTriggered,
  run,
  setTracingDisabled,
  tool,
  type AgentInputItem,
  type RunState,
} from '@openai/agents-core'
import { audit } from '@turnlog/audit'
import type { SessionStore, StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useProxiedStores, type TcpProxy } from '@turnlog/testing'
import { TURNLOG_SESSION_REASONS, TurnlogSession } from '@turnlog/openai-agents'
import { assistantMessage, compactionItem, userMessage } from './support/agent-items.js'
import { FakeModel, modelFunctionCall, modelMessage } from './support/fake-model.js'
import { ledgerRecords } from './support/ledger-records.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'

setTracingDisabled(true)

/** The weather tool the agent calls; `onCall` runs inside the tool (a fault can be armed there). */
function weatherTool(onCall: () => void = () => {}) {
  return tool({
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: {
      type: 'object',
      properties: { city: { type: 'string' } },
      required: ['city'],
      additionalProperties: false,
    },
    strict: true,
    execute: async (input: unknown) => {
      onCall()
      return `sunny in ${(input as { city: string }).city}`
    },
  })
}

/** A model that calls the tool once, then answers with the tool's output (read from its input). */
function weatherModel(turns = 1): FakeModel {
  const script = Array.from({ length: turns }, (_, i) => [
    [modelFunctionCall('get_weather', { city: 'Paris' }, `call_${i}`)],
    (request: { input: string | AgentInputItem[] }) => {
      const input = request.input as AgentInputItem[]
      const result = input.findLast((item) => item.type === 'function_call_result') as { output: unknown } | undefined
      const text = typeof result?.output === 'string' ? result.output : (result?.output as { text?: string } | undefined)?.text
      return [modelMessage(`The tool says: ${text ?? '?'}`, `msg_${i}`)]
    },
  ]).flat()
  return new FakeModel(script)
}

const agentWith = (model: FakeModel, onCall?: () => void): Agent =>
  new Agent({ name: 'weather', instructions: 'Answer with the weather.', model, tools: [weatherTool(onCall)] })

async function eventsOf(store: SessionStore, sessionId: string): Promise<StoredEvent[]> {
  const out: StoredEvent[] = []
  for await (const event of store.events(sessionId)) out.push(event)
  return out
}

/** How many `message_appended` events each message id has (a copy would be 2). */
async function appendCounts(store: SessionStore, sessionId: string): Promise<number[]> {
  const counts = new Map<string, number>()
  for (const event of await eventsOf(store, sessionId)) {
    if (event.type === 'message_appended') counts.set(event.messageId, (counts.get(event.messageId) ?? 0) + 1)
  }
  return [...counts.values()]
}

/** The item kinds a weather run stores, in order. */
const RUN_SHAPE = [
  { role: 'user' },
  { type: 'function_call', name: 'get_weather', callId: 'call_0' },
  { type: 'function_call_result', callId: 'call_0' },
  { type: 'message', role: 'assistant' },
]

/**
 * The SDK's own blocked-output case (`run.outputGuardrailReplaySession.test.ts`, "input-only blocked
 * transaction"): an output guardrail trips, the runner keeps only the input, through
 * `applyHistoryTransaction` (never `addItems`), so the response it withheld is never stored.
 */
function guardedAgent(): { agent: Agent; executed: () => number } {
  let executed = 0
  const terminalTool = tool({
    name: 'discarded_response_tool',
    description: 'Returns output from a response that cannot be rebuilt.',
    parameters: { type: 'object', properties: {}, required: [], additionalProperties: false },
    strict: true,
    execute: async () => {
      executed++
      return 'discarded terminal tool secret'
    },
  })
  const model = new FakeModel([
    [modelMessage('discarded assistant response secret', 'msg_secret'), modelFunctionCall('discarded_response_tool', {}, 'discarded-call')],
  ])
  const agent = new Agent({
    name: 'guarded',
    model,
    tools: [terminalTool],
    toolUseBehavior: 'stop_on_first_tool',
    outputGuardrails: [{ name: 'reject', execute: async () => ({ outputInfo: undefined, tripwireTriggered: true }) }],
  })
  return { agent, executed: () => executed }
}

describe.each(STORE_KINDS)('run() with a TurnlogSession (%s)', (kind) => {
  const stores = useStore(kind)

  it('stores every item of a tool-calling run once, feeds them back to the model on the next run, and audits clean', async () => {
    // given
    const store = stores.get()
    const session = new TurnlogSession({ store, sessionId: `chat-${randomUUID()}` })
    const model = weatherModel(2)
    const agent = agentWith(model)

    // when
    const first = await run(agent, 'What is the weather in Paris?', { session })
    const afterFirst = await session.getItems()
    const second = await run(agent, 'And tomorrow?', { session })

    // then
    expect(first.finalOutput).toBe('The tool says: sunny in Paris')
    expect(second.finalOutput).toBe('The tool says: sunny in Paris')
    expect(afterFirst).toMatchObject(RUN_SHAPE)
    // the model's input on the next run is exactly the stored history plus the new user message, as stored
    const items = await session.getItems()
    expect(items).toHaveLength(8)
    expect(items[4]).toMatchObject({ role: 'user', content: 'And tomorrow?' })
    expect(model.inputs[2]).toEqual(items.slice(0, 5))
    expect(items.slice(0, 4)).toEqual(afterFirst)
    expect(await appendCounts(store, session.turnlogSessionId)).toEqual(Array(8).fill(1))
    const loaded = await store.load(session.turnlogSessionId)
    expect(loaded.messages.every((m) => m.format === 'openai-agents')).toBe(true)
    expect(loaded.pairing.unanswered).toEqual([])
    expect((await audit(store, session.turnlogSessionId)).findings).toEqual([])
    expect((await audit(store, session.ledgerSessionId)).findings).toEqual([])
  })

  it('a model output with a compaction item: the runner replaces the history through replaceHistoryWithCompaction', async () => {
    // given: one earlier exchange in the session
    const store = stores.get()
    const session = new TurnlogSession({ store })
    await session.addItems([userMessage('old question'), assistantMessage('old answer')])
    const model = new FakeModel([[{ type: 'compaction', encrypted_content: 'enc' }, modelMessage('fresh answer', 'msg_c')]])

    // when
    const result = await run(new Agent({ name: 'compacting', model }), 'new question', { session })

    // then: the history starts at the compaction marker; the log has one turnlog compaction
    expect(result.finalOutput).toBe('fresh answer')
    const items = await session.getItems()
    expect(items[0]).toEqual(compactionItem('enc'))
    expect(items.at(-1)).toMatchObject({ role: 'assistant', content: [{ text: 'fresh answer' }] })
    const compactions = (await eventsOf(store, session.turnlogSessionId)).filter((e) => e.type === 'messages_compacted')
    expect(compactions.length).toBeGreaterThanOrEqual(1)
    expect(compactions.every((e) => (e.data as { reason?: string }).reason === TURNLOG_SESSION_REASONS.compaction)).toBe(true)
    expect((await audit(store, session.turnlogSessionId)).findings).toEqual([])
  })

  it('two sessions written concurrently lose and duplicate nothing', async () => {
    // given
    const store = stores.get()
    const a = new TurnlogSession({ store })
    const b = new TurnlogSession({ store })
    const batch = (who: string, i: number): AgentInputItem[] => [userMessage(`${who}-q${i}`), assistantMessage(`${who}-a${i}`)]

    // when: two runs and twenty appends to both sessions, all at once
    const [runA, runB] = await Promise.all([
      run(agentWith(weatherModel()), 'weather A?', { session: a }),
      run(agentWith(weatherModel()), 'weather B?', { session: b }),
      ...Array.from({ length: 10 }, (_, i) => a.addItems(batch('a', i))),
      ...Array.from({ length: 10 }, (_, i) => b.addItems(batch('b', i))),
    ])

    // then: every item once, each batch contiguous, each run's items in run order
    expect(runA.finalOutput).toBe('The tool says: sunny in Paris')
    expect(runB.finalOutput).toBe('The tool says: sunny in Paris')
    for (const [session, who] of [
      [a, 'a'],
      [b, 'b'],
    ] as const) {
      const items = await session.getItems()
      const texts = items.map((item) => JSON.stringify(item))
      expect(new Set(texts).size).toBe(texts.length)
      for (let i = 0; i < 10; i++) {
        const at = texts.indexOf(JSON.stringify(batch(who, i)[0]))
        expect(at).toBeGreaterThanOrEqual(0)
        expect(items[at + 1]).toEqual(batch(who, i)[1])
      }
      const runItems = items.filter((item) => !JSON.stringify(item).includes(`${who}-`))
      expect(runItems).toMatchObject(RUN_SHAPE)
      expect(items).toHaveLength(24)
      expect(await appendCounts(store, session.turnlogSessionId)).toEqual(Array(24).fill(1))
      expect((await audit(store, session.turnlogSessionId)).findings).toEqual([])
    }
  })

  it('an output guardrail trips: the runner stores the input through one history transaction, nothing withheld', async () => {
    // given
    const store = stores.get()
    const session = new TurnlogSession({ store })
    const { agent, executed } = guardedAgent()

    // when
    const error = await run(agent, 'preserve the discarded response input', { session }).then(
      () => undefined,
      (e: unknown) => e,
    )

    // then
    expect(error).toBeInstanceOf(OutputGuardrailTripwireTriggered)
    expect(executed()).toBe(1)
    const stored = JSON.stringify(await session.getItems())
    expect(await session.getItems()).toHaveLength(1)
    expect(stored).toContain('preserve the discarded response input')
    expect(stored).not.toContain('secret')
    const ledger = await ledgerRecords(store, session.ledgerSessionId)
    expect(ledger).toEqual([expect.objectContaining({ kind: 'history_transaction', type: 'append_items' })])
  })

  it('two instances of one conversation applying the same operation at once apply it once', async () => {
    // given
    const store = stores.get()
    const key = `shared-${randomUUID()}`
    const one = new TurnlogSession({ store, sessionId: key })
    const two = new TurnlogSession({ store, sessionId: key })
    await one.addItems([userMessage('start')])
    const args = {
      operationId: 'op-race',
      transaction: { type: 'append_items' as const, items: [userMessage('x'), assistantMessage('y')] },
    }

    // when
    await Promise.all([one.applyHistoryTransaction(args), two.applyHistoryTransaction(args), one.applyHistoryTransaction(args)])

    // then
    expect(await two.getItems()).toEqual([userMessage('start'), userMessage('x'), assistantMessage('y')])
    expect(await appendCounts(store, one.turnlogSessionId)).toEqual([1, 1, 1])
  })
})

describe('a lost commit acknowledgement (Postgres, through a TCP proxy)', () => {
  let proxy: TcpProxy
  let direct: PostgresStore
  let viaProxy: PostgresStore
  useProxiedStores((p) => ({ proxy, direct, viaProxy } = p))

  const isAppend = (sql: string): boolean => /append_(messages|batches)/.test(sql)

  /** A session on the proxied store whose DB_TRANSIENT retries are counted. */
  function proxiedSession(retries: unknown[]): TurnlogSession {
    return new TurnlogSession({ store: viaProxy, retry: { baseDelayMs: 5, onRetry: (error) => retries.push(error) } })
  }

  it('during run(): the write after the tool call commits, its ack is lost; the retry stores nothing twice, the audit is clean', async () => {
    // given
    const retries: unknown[] = []
    const session = proxiedSession(retries)
    let fired: Promise<{ serverOutcome: string }> | undefined
    const agent = agentWith(weatherModel(), () => {
      fired = proxy.arm({ kind: 'ack-lost', match: isAppend })
    })

    // when
    const result = await run(agent, 'What is the weather in Paris?', { session })

    // then
    expect(result.finalOutput).toBe('The tool says: sunny in Paris')
    expect(proxy.armed).toBe(false)
    expect((await fired)?.serverOutcome).toBe('committed')
    expect(retries.map((e) => (e as { code?: string }).code)).toEqual(['DB_TRANSIENT'])
    expect(await session.getItems()).toMatchObject(RUN_SHAPE)
    expect(await session.getItems()).toHaveLength(4)
    expect(await appendCounts(direct, session.turnlogSessionId)).toEqual([1, 1, 1, 1])
    expect((await audit(direct, session.turnlogSessionId)).findings).toEqual([])
  })

  it('the first write of run() (the user input) loses its ack: one copy', async () => {
    // given
    const retries: unknown[] = []
    const session = proxiedSession(retries)
    await session.getSessionId() // the sessions exist: the fault hits the append
    const fired = proxy.arm({ kind: 'ack-lost', match: isAppend })

    // when
    await run(agentWith(weatherModel()), 'What is the weather in Paris?', { session })

    // then
    expect((await fired).serverOutcome).toBe('committed')
    expect(retries).toHaveLength(1)
    expect(await appendCounts(direct, session.turnlogSessionId)).toEqual([1, 1, 1, 1])
    expect((await audit(direct, session.turnlogSessionId)).findings).toEqual([])
  })

  it('popItem, clearSession, a history transaction and a compaction: each retried after a lost ack writes its event once', async () => {
    // given
    const retries: unknown[] = []
    const session = proxiedSession(retries)
    await session.addItems(['q1', 'q2', 'q3', 'q4'].map(userMessage))

    // when: each call's commit lands but its acknowledgement is lost (the fault hits the first
    // transaction that writes: reads before it pass)
    let fired = proxy.arm({ kind: 'ack-lost' })
    const popped = await session.popItem()
    expect((await fired).serverOutcome).toBe('committed')

    fired = proxy.arm({ kind: 'ack-lost' })
    await session.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [userMessage('t1')] } })
    expect((await fired).serverOutcome).toBe('committed')

    fired = proxy.arm({ kind: 'ack-lost' })
    await session.replaceHistoryWithCompaction([compactionItem('enc'), userMessage('q3'), userMessage('t1')])
    expect((await fired).serverOutcome).toBe('committed')
    const compacted = await session.getItems()

    fired = proxy.arm({ kind: 'ack-lost' })
    await session.clearSession()
    expect((await fired).serverOutcome).toBe('committed')

    // then
    expect(popped).toEqual(userMessage('q4'))
    expect(compacted).toEqual([compactionItem('enc'), userMessage('q3'), userMessage('t1')])
    expect(await session.getItems()).toEqual([])
    // each of the four runs again and finds its change already made (popItem: its ledger record stored,
    // so the retry rolls back its own rewind and returns the item the first attempt popped)
    expect(retries.map((e) => (e as { code?: string }).code)).toEqual(Array(4).fill('DB_TRANSIENT'))
    const events = await eventsOf(direct, session.turnlogSessionId)
    expect(events.map((e) => [e.type, (e.data as { reason?: string }).reason ?? null])).toEqual([
      ...Array(4).fill(['message_appended', null]),
      ['messages_retracted', TURNLOG_SESSION_REASONS.popItem],
      ['message_appended', null],
      ['message_appended', null],
      ['messages_compacted', TURNLOG_SESSION_REASONS.compaction],
      ['messages_retracted', TURNLOG_SESSION_REASONS.clearSession],
    ])
    expect(await appendCounts(direct, session.turnlogSessionId)).toEqual(Array(6).fill(1))
    // the operation was recorded once; after the clear it is free again
    await session.applyHistoryTransaction({ operationId: 'op-1', transaction: { type: 'append_items', items: [userMessage('t1')] } })
    expect(await session.getItems()).toEqual([userMessage('t1')])
    expect((await audit(direct, session.turnlogSessionId)).findings).toEqual([])
  })

  it("the runner's blocked-output transaction loses its ack with no retry left: resuming the run state applies it once", async () => {
    // given: one attempt only, so the DB_TRANSIENT reaches the runner
    const session = new TurnlogSession({ store: viaProxy, retry: { attempts: 1 } })
    await session.getSessionId()
    const { agent, executed } = guardedAgent()
    const fired = proxy.arm({ kind: 'ack-lost' })

    // when
    const first = await run(agent, 'preserve the discarded response input', { session }).then(
      () => undefined,
      (e: unknown) => e,
    )
    expect((await fired).serverOutcome).toBe('committed')
    expect(first).toBeInstanceOf(OutputGuardrailTripwireTriggered)
    const state = (first as OutputGuardrailTripwireTriggered<never, never>).state as RunState<unknown, Agent> | undefined
    expect(state?._pendingSessionHistoryTransaction).toBeDefined()
    const second = await run(agent, state as RunState<unknown, Agent>, { session }).then(
      () => undefined,
      (e: unknown) => e,
    )

    // then: the same operation id came again and was a no-op; the input is stored once
    expect(second).toBeInstanceOf(OutputGuardrailTripwireTriggered)
    expect(executed()).toBe(1)
    const items = await session.getItems()
    expect(items).toHaveLength(1)
    expect(JSON.stringify(items)).not.toContain('secret')
    expect(await appendCounts(direct, session.turnlogSessionId)).toEqual([1])
    expect(await ledgerRecords(direct, session.ledgerSessionId)).toHaveLength(1)
  })

  it('a commit that never happens (the server rolls back) before a compaction and a transaction: the retry applies each once', async () => {
    // given
    const retries: unknown[] = []
    const session = proxiedSession(retries)
    await session.addItems([userMessage('q1'), assistantMessage('a1'), userMessage('q2')])
    const before = (await direct.load(session.turnlogSessionId)).messages

    // when
    let fired = proxy.arm({ kind: 'commit-lost' })
    await session.replaceHistoryWithCompaction([compactionItem('enc'), userMessage('q2')])
    expect((await fired).serverOutcome).toBe('not-sent')
    fired = proxy.arm({ kind: 'commit-lost' })
    await session.applyHistoryTransaction({ operationId: 'op-rb', transaction: { type: 'append_items', items: [assistantMessage('t')] } })
    expect((await fired).serverOutcome).toBe('not-sent')

    // then
    expect(retries).toHaveLength(2)
    expect(await session.getItems()).toEqual([compactionItem('enc'), userMessage('q2'), assistantMessage('t')])
    const after = (await direct.load(session.turnlogSessionId)).messages
    expect(after[1]?.id).toBe(before[2]?.id) // the retained item kept its id
    const events = await eventsOf(direct, session.turnlogSessionId)
    expect(events.filter((e) => e.type === 'messages_compacted')).toHaveLength(1)
    expect(await appendCounts(direct, session.turnlogSessionId)).toEqual(Array(5).fill(1))
    expect(await ledgerRecords(direct, session.ledgerSessionId)).toHaveLength(1)
    expect((await audit(direct, session.turnlogSessionId)).findings).toEqual([])
  })
})
