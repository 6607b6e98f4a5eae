/**
 * A reply write whose commit acknowledgement is lost, through the README's route (`createUIMessageStream`
 * with `persistReply`'s callbacks), the model scripted with `MockLanguageModelV3` and the AI SDK's own
 * client (`AbstractChat`). Regression test of an adversarial tester's finding (scratch `ai1.mjs`):
 *
 * - The reply's FIRST append committed, its acknowledgement lost (`DB_TRANSIENT`). For a one-step reply
 *   the stream's end sent the same append again, `status: 'final'`: a duplicate (a message's content hash
 *   does not cover its status), so the stored reply stayed `partial` for good. `interrupted` listed it,
 *   a retried question was not `settled`, the model ran again and the retry's answer was appended into
 *   the stored reply (one assistant message, two answers). For a reply of several steps the next step's
 *   append was refused (`MESSAGE_CONFLICT`, recorded as conflict evidence: the audit warned
 *   `message_conflict_attempt`) before it revised the reply.
 * - A LATER write (a revision) losing its acknowledgement: the next write revises again, idempotently
 *   (pinned here too, it was right before).
 *
 * After every fault the README's promises hold: the reply is stored whole and final, `interrupted` is
 * empty, the audit is clean, `reply.done` reports the lost acknowledgement, and a retried request runs no
 * model, writes nothing and gives the client the same reply. On Postgres through a real TCP proxy (the
 * server commits, the client's connection dies), and on Postgres and PGlite through a store wrapper
 * whose call commits and then throws `DB_TRANSIENT` (PGlite has no wire to cut).
 */
import { describe, expect, it } from '@jest/globals'
import { audit } from '@turnlog/audit'
import { TurnlogError, type SessionStore } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useProxiedStores, type TcpProxy } from '@turnlog/testing'
import type { UIMessage } from 'ai'
import { chatMessageId, chatSessionId, loadChat, loadChatState, persistReply, receiveChat } from '@turnlog/ai-sdk'
import { MockLanguageModelV3 } from 'ai/test'
import { TestChat, scriptedModel, textStep, toolStep, type LanguageModelV3StreamPart } from './chat-fixture.js'
import { chatRoute, type RouteLog } from './chat-route.js'
import { STORE_KINDS, collect, useTestStoreOfKind } from './store-kinds.js'

const user = (id: string, text: string): UIMessage => ({ id, role: 'user', parts: [{ type: 'text', text }] })
const assistant = (id: string, text: string): UIMessage => ({ id, role: 'assistant', parts: [{ type: 'text', text, state: 'done' }] })

/** Which reply write loses its acknowledgement: the first append, or the first revision (a later step's write). */
type FaultyWrite = 'append' | 'revise'

/** A one-shot lost acknowledgement, armed when the model starts (after the request was recorded). */
interface AckFault {
  /** Arms it: the next write of that kind commits and its caller gets `DB_TRANSIENT`. */
  arm(): void
  /** Resolves when it fired (and, through the proxy, checks that the server committed). */
  fired(): Promise<void>
}

/** One step of a tool run, then the answer: three writes (append, revision, finalization). */
const TWO_STEPS = [toolStep('c1', 'weather', { city: 'Kyoto' }), textStep('Kyoto is sunny.')]
/** One step: two writes (append, finalization). */
const ONE_STEP = [textStep('Hello there.')]

/** The scripted model, arming `fault` when its first step starts. */
function modelArming(script: readonly (readonly LanguageModelV3StreamPart[])[], fault: AckFault): MockLanguageModelV3 {
  const scripted = scriptedModel(script)
  let armed = false
  return new MockLanguageModelV3({
    doStream: async (options) => {
      if (!armed) fault.arm()
      armed = true
      return scripted.doStream(options)
    },
  })
}

/**
 * Sends one question through the README's route on `routeStore` with `fault` armed, then checks what
 * `store` (the same database, unfaulted) holds and retries the request as a client that lost the
 * response would (it holds the question only, and posts it again).
 */
async function lostAckThenRetry(
  store: SessionStore,
  routeStore: SessionStore,
  chatId: string,
  script: readonly (readonly LanguageModelV3StreamPart[])[],
  fault: AckFault,
): Promise<void> {
  // given the README's route, the model arming the fault once the question is recorded
  const model = modelArming(script, fault)
  const log: RouteLog = { replies: [] }
  const route = chatRoute(routeStore, model, log)
  const chat = new TestChat({ id: chatId, api: route, lastOnly: true })

  // when the reply's write loses its acknowledgement
  await chat.sendMessage({ text: 'Hi, what is the weather in Kyoto?' })
  await fault.fired()
  expect(log.replies).toHaveLength(1)
  await expect(log.replies[0]).rejects.toMatchObject({ code: 'DB_TRANSIENT' })

  // then the reply is stored whole and final: nothing interrupted, no conflict, a clean audit
  const sessionId = chatSessionId(chatId)
  const state = await loadChatState(store, chatId)
  const [question, reply] = chat.list
  expect(reply?.role).toBe('assistant')
  expect(state.messages).toEqual(chat.list)
  expect(state.interrupted).toEqual([])
  expect((await store.load(sessionId)).messages.map((m) => m.status)).toEqual([undefined, undefined])
  const replyId = state.ids.get(reply?.id ?? '')
  const replyEvents = (await collect(store.events(sessionId))).filter((e) => e.messageId === replyId).map((e) => e.type)
  expect(replyEvents.at(-1)).toBe('message_finalized')
  expect(replyEvents.filter((type) => type === 'message_appended')).toHaveLength(1)
  expect(await store.conflicts(sessionId)).toEqual([])
  expect((await audit(store, sessionId)).findings).toEqual([])

  // when the client, whose response was lost, posts its question again
  const { version } = await store.getSession(sessionId)
  const lost = new TestChat({ id: chatId, api: route, lastOnly: true, messages: [question as NonNullable<typeof question>] })
  await lost.sendMessage()

  // then no model runs and nothing is written: the client gets the stored reply, the chat keeps one answer
  expect(model.doStreamCalls).toHaveLength(script.length)
  expect(log.replies).toHaveLength(1)
  expect((await store.getSession(sessionId)).version).toBe(version)
  expect(lost.status).toBe('ready')
  expect(lost.list).toEqual(chat.list)
  expect(await loadChat(store, chatId)).toEqual(chat.list)
}

describe('a reply write that loses its commit acknowledgement (Postgres, through a TCP proxy)', () => {
  let proxy: TcpProxy
  let direct: PostgresStore
  let viaProxy: PostgresStore
  useProxiedStores((p) => ({ proxy, direct, viaProxy } = p))

  /**
   * The proxy's fault on the first transaction that sends the write's SQL: `ack-lost` (the server
   * commits, the client never hears), or `commit-lost` (the commit never reaches the server).
   */
  function proxyFault(write: FaultyWrite, kind: 'ack-lost' | 'commit-lost' = 'ack-lost'): AckFault {
    // an append goes through append_messages (or append_batches); a revision inserts its event itself
    const match = write === 'append' ? /append_(messages|batches)/ : /insert into turnlog\.events/
    let fired: Promise<unknown> | undefined
    return {
      arm: () => {
        fired = proxy.arm({ kind, match: (text) => match.test(text) })
      },
      fired: async () => {
        expect(fired).toBeDefined()
        expect(await fired).toMatchObject({ serverOutcome: kind === 'ack-lost' ? 'committed' : 'not-sent' })
      },
    }
  }

  it("the reply's first append of a one-step reply: the end finalizes it; a retry runs no model and writes nothing", async () => {
    await lostAckThenRetry(direct, viaProxy, 'proxy-first-append', ONE_STEP, proxyFault('append'))
  })

  it("the reply's first append of a two-step reply: the next step revises it (no conflict), the end finalizes it", async () => {
    await lostAckThenRetry(direct, viaProxy, 'proxy-first-append-steps', TWO_STEPS, proxyFault('append'))
  })

  it("a later step's revision: the end revises and finalizes it", async () => {
    await lostAckThenRetry(direct, viaProxy, 'proxy-revision', TWO_STEPS, proxyFault('revise'))
  })

  it("the reply's first append lost before its commit: the next step appends it", async () => {
    await lostAckThenRetry(direct, viaProxy, 'proxy-commit-lost', TWO_STEPS, proxyFault('append', 'commit-lost'))
  })
})

describe.each(STORE_KINDS)('a reply write that loses its commit acknowledgement (%s, a store wrapper)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  /**
   * `store` as the route sees it: once armed, the next call of `write` commits, then throws `DB_TRANSIENT`
   * (or, `committed: false`, throws it without calling the store).
   */
  function losingAck(write: FaultyWrite, committed = true): { routeStore: SessionStore; fault: AckFault } {
    let armed = false
    let fire!: () => void
    const fired = new Promise<void>((resolve) => (fire = resolve))
    const routeStore = new Proxy(store, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target)
        if (typeof value !== 'function') return value
        const method = (value as (...args: unknown[]) => unknown).bind(target)
        if (key !== write) return method
        return async (...args: unknown[]) => {
          if (!armed) return method(...args)
          armed = false
          if (committed) await method(...args)
          fire()
          throw new TurnlogError('DB_TRANSIENT', `connection lost ${committed ? 'after' : 'before'} COMMIT (simulated)`)
        }
      },
    }) as SessionStore
    return { routeStore, fault: { arm: () => (armed = true), fired: () => fired } }
  }

  it.each([
    ['the first append of a one-step reply', 'append', ONE_STEP],
    ['the first append of a two-step reply', 'append', TWO_STEPS],
    ["a later step's revision", 'revise', TWO_STEPS],
  ] as const)('%s: the reply ends whole and final; a retry runs no model and writes nothing', async (name, write, script) => {
    const { routeStore, fault } = losingAck(write)
    await lostAckThenRetry(store, routeStore, `wrapped-${kind}-${name.replaceAll(/\W+/g, '-')}`, script, fault)
  })

  it("the reply's first append lost before its commit: the next step appends it, the end finalizes it", async () => {
    const { routeStore, fault } = losingAck('append', false)
    await lostAckThenRetry(store, routeStore, `wrapped-${kind}-not-committed`, TWO_STEPS, fault)
  })

  it('a reply whose first append committed unacknowledged, then retracted by another tab: the next write fails, no second copy', async () => {
    // given a reply whose first step's append committed, its acknowledgement lost
    const chatId = `wrapped-${kind}-retracted`
    const { routeStore, fault } = losingAck('append')
    const reply = persistReply(routeStore, await receiveChat(store, chatId, { messages: [user('u1', 'one')] }))
    const id = reply.generateMessageId()
    fault.arm()
    await expect(reply.onStepFinish({ responseMessage: assistant(id, 'step one'), isContinuation: false })).rejects.toMatchObject({
      code: 'DB_TRANSIENT',
    })
    // and another tab, which never saw the reply, posts its whole list
    expect((await receiveChat(store, chatId, { messages: [user('u1', 'one'), user('u2', 'two')] })).retracted).toEqual([id])

    // when the reply's stream ends
    await expect(
      reply.onFinish({ responseMessage: assistant(id, 'step one'), isContinuation: false, isAborted: false, finishReason: 'stop' }),
    ).rejects.toMatchObject({ code: 'UNKNOWN_MESSAGE' })

    // then the write failed loudly, and the reply stays retracted, stored once
    await expect(reply.done).rejects.toBeDefined()
    expect(await loadChat(store, chatId)).toEqual([user('u1', 'one'), user('u2', 'two')])
    const transcript = await store.transcript(chatSessionId(chatId))
    const stored = transcript.entries.filter((e) => e.message.id === chatMessageId(chatId, id))
    expect(stored.map((e) => e.status)).toEqual(['retracted'])
    expect(await store.conflicts(chatSessionId(chatId))).toEqual([])
  })
})
