import { describe, expect, it } from '@jest/globals'
import { audit } from '@turnlog/audit'
import type { PostgresStore } from '@turnlog/postgres'
import { isToolUIPart, validateUIMessages, type UIMessage } from 'ai'
import { chatSessionId, forkChat, loadChat, loadChatState, persistReply, receiveChat } from '@turnlog/ai-sdk'
import { MockLanguageModelV3 } from 'ai/test'
import { TestChat, scriptedModel, textStep, toolStep, tools, type ChatMessage } from './chat-fixture.js'
import { chatRoute, type RouteLog } from './chat-route.js'
import { STORE_KINDS, collect, useTestStoreOfKind } from './store-kinds.js'

describe.each(STORE_KINDS)('useChat + streamText persistence on %s', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  /** The chat as stored equals what the client holds, and passes the SDK's own validation. */
  async function expectSameAsClient(chat: TestChat): Promise<UIMessage[]> {
    const stored = await loadChat(store, chat.id)
    expect(stored).toEqual(chat.list)
    await expect(validateUIMessages<ChatMessage>({ messages: stored, tools })).resolves.toEqual(stored)
    return stored
  }

  /** The reply's events: type and status, in log order. */
  async function replyEvents(chatId: string, uiMessageId: string): Promise<string[]> {
    const { ids } = await loadChatState(store, chatId)
    const id = ids.get(uiMessageId)
    const events = await collect(store.events(chatSessionId(chatId)))
    return events
      .filter((e) => e.messageId === id)
      .map((e) => `${e.type}${(e.data as { status?: string }).status === 'partial' ? ':partial' : ''}`)
  }

  /** Runs `fn` counting the fixture's `pay` tool executions (the payments made). */
  async function countingPayments(fn: () => Promise<void>): Promise<number> {
    const pay = tools.pay as unknown as { execute: (...args: unknown[]) => unknown }
    const original = pay.execute
    let payments = 0
    pay.execute = (...args: unknown[]) => {
      payments++
      return original(...args)
    }
    try {
      await fn()
    } finally {
      pay.execute = original
    }
    return payments
  }

  /** Approves the payment the chat's reply asks for (the client's edit; not sent yet): the list it then holds. */
  async function approvePayment(chat: TestChat): Promise<UIMessage[]> {
    const approvalId = (chat.list[1]?.parts.find(isToolUIPart) as { approval: { id: string } }).approval.id
    await chat.addToolApprovalResponse({ id: approvalId, approved: true })
    return chat.list
  }

  /** Posts `list` again as the client sent it (the whole list, or its last message), reading the whole response. */
  async function repost(
    route: (request: Request) => Promise<Response>,
    chatId: string,
    list: UIMessage[],
    lastOnly: boolean,
  ): Promise<Response> {
    const body = lastOnly
      ? { id: chatId, message: list.at(-1), trigger: 'submit-message', messageId: list.at(-1)?.id }
      : { id: chatId, messages: list, trigger: 'submit-message' }
    const response = await route(new Request('http://in-process/api/chat', { method: 'POST', body: JSON.stringify(body) }))
    await response.text()
    return response
  }

  /**
   * A chat of one user question and a reply of `parts` stored as a route would store it (`receiveChat`, then
   * `persistReply`'s `onFinish`), `aborted` or finished: the reply's message id.
   */
  async function storedReply(chatId: string, parts: UIMessage['parts'], aborted: boolean): Promise<string> {
    const turn = await receiveChat<UIMessage>(store, chatId, {
      messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text', text: 'Nice?' }] }],
    })
    const reply = persistReply(store, turn)
    const id = reply.generateMessageId()
    await reply.onFinish({
      responseMessage: { id, role: 'assistant', parts },
      isContinuation: false,
      isAborted: aborted,
      ...(aborted ? {} : { finishReason: 'stop' as const }),
    })
    return id
  }

  it('a 3-step tool run keeps one assistant id, partial after the first step, revised once per step, final at the end', async () => {
    // given
    const model = scriptedModel([
      toolStep('c1', 'weather', { city: 'Paris' }),
      toolStep('c2', 'weather', { city: 'Oslo' }),
      textStep('Paris is warmer.'),
    ])
    const log: RouteLog = { replies: [] }
    const chat = new TestChat({ id: `three-steps-${kind}`, api: chatRoute(store, model, log) })
    // when
    await chat.sendMessage({ text: 'Paris or Oslo?' })
    const reply = await log.replies[0]
    // then
    const stored = await expectSameAsClient(chat)
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(reply).toMatchObject({ uiMessageId: stored[1]?.id, status: 'final', writes: 4 })
    // appended partial at the end of step 1, one revision per later step, finalized (same content) at the end
    expect(await replyEvents(chat.id, stored[1]?.id as string)).toEqual([
      'message_appended:partial',
      'message_revised:partial',
      'message_revised:partial',
      'message_finalized',
    ])
    // the first write held step 1 only: the first tool call, answered
    const { messages: v2 } = await store.load(chatSessionId(chat.id), { at: 2 })
    expect(v2[1]?.status).toBe('partial')
    const parts = (v2[1]?.payload as unknown as UIMessage).parts
    expect(parts.filter(isToolUIPart).map((p) => [p.toolCallId, p.state])).toEqual([['c1', 'output-available']])
    expect((await store.load(chatSessionId(chat.id))).messages[1]?.status).toBeUndefined()
  })

  it.each([false, true])('a tool approval continuation revises the same reply (only the last message sent: %s)', async (lastOnly) => {
    // given: the model asks to pay; the SDK stops for the user's approval
    const model = scriptedModel([toolStep('p1', 'pay', { amount: 5 }), textStep('Paid 5.')])
    const log: RouteLog = { replies: [] }
    const chat = new TestChat({ id: `approval-${kind}-${lastOnly}`, api: chatRoute(store, model, log), lastOnly })
    await chat.sendMessage({ text: 'Pay 5' })
    const asked = await expectSameAsClient(chat)
    const part = asked[1]?.parts.find(isToolUIPart)
    expect(part?.state).toBe('approval-requested')
    const approvalId = (part as { approval: { id: string } }).approval.id
    // when: approved, the client sends the reply back, the server continues it
    await chat.addToolApprovalResponse({ id: approvalId, approved: true })
    await chat.sendMessage()
    const replies = await Promise.all(log.replies)
    // then: one assistant message, the approval and the continuation recorded as revisions of it
    const stored = await expectSameAsClient(chat)
    expect(stored.map((m) => m.role)).toEqual(['user', 'assistant'])
    expect(replies.map((r) => r.uiMessageId)).toEqual([stored[1]?.id, stored[1]?.id])
    expect(replies.map((r) => r.messageId)).toEqual([replies[0]?.messageId, replies[0]?.messageId])
    expect(stored[1]?.parts.find(isToolUIPart)).toMatchObject({ state: 'output-available', output: { paid: 5 } })
    expect(await replyEvents(chat.id, stored[1]?.id as string)).toEqual([
      'message_appended:partial', // step 1 of the first request
      'message_finalized', // its end: waiting for approval
      'message_revised', // the client's approval (receiveChat)
      'message_revised:partial', // step 1 of the continuation
      'message_finalized',
    ])
  })

  it.each([false, true])(
    'a re-posted approval whose continuation is stored (a lost response) runs no model and pays once; the chat stays (only the last message sent: %s)',
    async (lastOnly) => {
      // given: an approved payment whose continuation the server stored, and the request the client sent for it
      const payments = await countingPayments(async () => {
        const model = scriptedModel([toolStep('p1', 'pay', { amount: 5 }), textStep('Paid 5.'), textStep('Paid again.')])
        const log: RouteLog = { replies: [] }
        const route = chatRoute(store, model, log)
        const chat = new TestChat({ id: `approval-retry-${kind}-${lastOnly}`, api: route, lastOnly })
        await chat.sendMessage({ text: 'Pay 5' })
        const approved = await approvePayment(chat)
        await chat.sendMessage()
        await Promise.all(log.replies)
        const before = await store.load(chatSessionId(chat.id))
        const calls = model.doStreamCalls.length
        // when the client, whose response was lost, sends the same request again
        const response = await repost(route, chat.id, approved, lastOnly)
        await Promise.all(log.replies)
        // then no model ran (the tool would run a second time), and nothing was written: the chat keeps its continuation
        expect(response.status).toBe(200)
        expect(model.doStreamCalls.length).toBe(calls)
        const after = await store.load(chatSessionId(chat.id))
        expect(after.version).toBe(before.version)
        expect(await loadChat(store, chat.id)).toEqual(chat.list)
        expect(chat.list[1]?.parts.find(isToolUIPart)).toMatchObject({ state: 'output-available', output: { paid: 5 } })
      })
      // and the payment was made once
      expect(payments).toBe(1)
    },
  )

  it.each([false, true])(
    'a re-posted approval whose continuation failed at the provider continues the reply from what was stored (only the last message sent: %s)',
    async (lastOnly) => {
      // given: an approval whose continuation failed at the provider after the tool ran: the reply holds
      // the call's result, interrupted (partial), with no answer after it
      const payments = await countingPayments(async () => {
        const inner = scriptedModel([toolStep('p1', 'pay', { amount: 5 }), textStep('Paid 5.')])
        let call = 0
        const model = new MockLanguageModelV3({
          doStream: async (options) => {
            if (++call === 2) throw new Error('the provider is down')
            return inner.doStream(options)
          },
        })
        const log: RouteLog = { replies: [] }
        const route = chatRoute(store, model, log)
        const chat = new TestChat({ id: `approval-failed-${kind}-${lastOnly}`, api: route, lastOnly })
        await chat.sendMessage({ text: 'Pay 5' })
        const approved = await approvePayment(chat)
        await chat.sendMessage()
        await Promise.allSettled(log.replies)
        const failed = await loadChatState(store, chat.id)
        expect(failed.interrupted).toEqual([approved[1]?.id])
        expect(failed.messages[1]?.parts.find(isToolUIPart)).toMatchObject({ state: 'output-available', output: { paid: 5 } })
        // when the client sends the same request again (an earlier state of the stored reply)
        await repost(route, chat.id, approved, lastOnly)
        await Promise.allSettled(log.replies)
        // then the model ran on the stored reply (its tool result kept, not rolled back to the approval) and
        // answered: the reply is complete and final
        expect(call).toBe(3)
        expect(JSON.stringify(inner.doStreamCalls[1]?.prompt)).toContain('"paid":5')
        const done = await loadChatState(store, chat.id)
        expect(done.interrupted).toEqual([])
        expect(done.messages[1]?.parts.find(isToolUIPart)).toMatchObject({ state: 'output-available', output: { paid: 5 } })
        expect(done.messages[1]?.parts.some((p) => p.type === 'text' && p.text === 'Paid 5.')).toBe(true)
      })
      // and the payment was made once (the retry did not roll the reply back to the approval)
      expect(payments).toBe(1)
    },
  )

  it('a reply holding an answered approval no model acted on is not settled: a re-post runs the model (the approval would wait for ever)', async () => {
    // given: the approval recorded (receiveChat), then no model run stored anything (a crash before the tool ran)
    const model = scriptedModel([toolStep('p1', 'pay', { amount: 5 })])
    const chat = new TestChat({ id: `approval-unrun-${kind}`, api: chatRoute(store, model) })
    await chat.sendMessage({ text: 'Pay 5' })
    await approvePayment(chat)
    const first = await receiveChat(store, chat.id, { messages: chat.list })
    expect(first.revised).toEqual([chat.list[1]?.id])
    // when the same request comes again
    const again = await receiveChat(store, chat.id, { messages: chat.list })
    // then nothing is written, and the route must run the model (settled is false)
    expect([again.duplicate, again.settled]).toEqual([true, false])
    // while a re-post of a reply that owes nothing is settled
    const settledChat = new TestChat({ id: `settled-${kind}`, api: chatRoute(store, scriptedModel([textStep('Hi.')])) })
    await settledChat.sendMessage({ text: 'Hello' })
    const repost = await receiveChat(store, settledChat.id, { messages: settledChat.list })
    expect([repost.duplicate, repost.settled]).toEqual([true, true])
  })

  it('an aborted stream leaves the reply partial, flagged, with what was streamed', async () => {
    // given: the second step of the reply hangs mid-sentence
    const model = scriptedModel([
      toolStep('c1', 'weather', { city: 'Rome' }),
      [...textStep('Rome is sunny and').slice(0, -2), 'hang'],
      textStep('Fine.'),
    ])
    const log: RouteLog = { replies: [] }
    const chat = new TestChat({ id: `abort-${kind}`, api: chatRoute(store, model, log) })
    // when: the user stops it once the text arrived
    await chat.sendAndStopAt('Weather in Rome?', 'Rome is sunny and')
    const reply = await log.replies[0]
    // then
    expect(reply?.status).toBe('partial')
    const state = await loadChatState(store, chat.id)
    expect(state.interrupted).toEqual([reply?.uiMessageId])
    expect(state.messages[1]?.parts.some((p) => p.type === 'text' && p.text === 'Rome is sunny and')).toBe(true)
    await expectSameAsClient(chat)
    expect(await replyEvents(chat.id, reply?.uiMessageId as string)).toEqual(['message_appended:partial', 'message_revised:partial'])
    const report = await audit(store, chatSessionId(chat.id))
    expect(report.findings.map((f) => f.kind)).toEqual(['partial_never_finalized'])
    // and the next turn keeps it partial: the client re-posts it unchanged
    await chat.sendMessage({ text: 'Go on' })
    expect((await loadChatState(store, chat.id)).interrupted).toEqual([reply?.uiMessageId])
    await expectSameAsClient(chat)
  })

  it('a tool call an interrupted reply left open reaches the model as an error result, the chat unchanged', async () => {
    // given: a reply aborted while its tool ran (the call has no result)
    const chatId = `open-call-${kind}`
    const id = await storedReply(
      chatId,
      [{ type: 'step-start' }, { type: 'tool-weather', toolCallId: 'c9', state: 'input-available', input: { city: 'Nice' } }],
      true,
    )
    const model = scriptedModel([textStep('That lookup failed, sorry.')])
    const chat = new TestChat({ id: chatId, api: chatRoute(store, model), messages: await loadChat(store, chatId) })
    // when
    await chat.sendMessage({ text: 'and?' })
    // then: the model was told the call was interrupted; the stored chat still shows it as it was
    const prompt = JSON.stringify(model.doStreamCalls[0]?.prompt)
    expect(prompt).toContain('"toolCallId":"c9"')
    expect(prompt).toContain('interrupted')
    const stored = await expectSameAsClient(chat)
    expect(stored[1]?.parts[1]).toMatchObject({ toolCallId: 'c9', state: 'input-available' })
    expect((await loadChatState(store, chatId)).interrupted).toEqual([id])
  })

  it('a call whose part is still open beside its answered part reaches the model once, with its result; the chat unchanged', async () => {
    // given: a finished reply holding a stale open part of a call next to the answered part of the same call
    const chatId = `open-and-answered-${kind}`
    const parts: UIMessage['parts'] = [
      { type: 'step-start' },
      { type: 'tool-weather', toolCallId: 'c7', state: 'input-available', input: { city: 'Nice' } },
      { type: 'tool-weather', toolCallId: 'c7', state: 'output-available', input: { city: 'Nice' }, output: { tempC: 21 } },
      { type: 'text', text: 'It is 21 °C.' },
    ]
    await storedReply(chatId, parts, false)
    const model = scriptedModel([textStep('Sunny too.')])
    const chat = new TestChat({ id: chatId, api: chatRoute(store, model), messages: await loadChat(store, chatId) })
    // when
    await chat.sendMessage({ text: 'and the sky?' })
    // then: one call c7 in the prompt, with its result; the stored chat still holds both parts
    const prompt = model.doStreamCalls[0]?.prompt ?? []
    const toolParts = prompt
      .flatMap((m): readonly { type: string; toolCallId?: string }[] => (typeof m.content === 'string' ? [] : m.content))
      .filter((p) => p.type === 'tool-call' || p.type === 'tool-result')
    expect(toolParts.map((p) => [p.type, p.toolCallId])).toEqual([
      ['tool-call', 'c7'],
      ['tool-result', 'c7'],
    ])
    const stored = await expectSameAsClient(chat)
    expect(stored[1]?.parts).toEqual(parts)
  })

  it('re-posting what the store holds writes nothing, whole list or last message', async () => {
    // given
    const chat = new TestChat({ id: `repost-${kind}`, api: chatRoute(store, scriptedModel([textStep('Hi!')])) })
    await chat.sendMessage({ text: 'Hello' })
    const { version } = await store.getSession(chatSessionId(chat.id))
    // when
    const whole = await receiveChat(store, chat.id, { messages: chat.list })
    const last = await receiveChat(store, chat.id, { message: chat.list[1] as UIMessage })
    const first = await receiveChat(store, chat.id, { message: chat.list[0] as UIMessage, trigger: 'submit-message' })
    // then
    for (const turn of [whole, last, first]) {
      expect(turn).toMatchObject({ duplicate: true, version, appended: [], revised: [], retracted: [] })
      expect(turn.messages).toEqual(chat.list)
    }
    // the stored reply a re-post of the question already got; none for a client that posted the reply
    expect([whole.answered, last.answered, first.answered]).toEqual([undefined, undefined, chat.list[1]])
    expect((await store.getSession(chatSessionId(chat.id))).version).toBe(version)
  })

  it('a re-posted question gets the reply that followed it as `answered`; a chat ending with a question has none', async () => {
    // given two answered questions
    const chat = new TestChat({ id: `answered-${kind}`, api: chatRoute(store, scriptedModel([textStep('One.'), textStep('Two.')])) })
    await chat.sendMessage({ text: 'first' })
    await chat.sendMessage({ text: 'second' })
    const [q1, a1, q2, a2] = chat.list as [UIMessage, UIMessage, UIMessage, UIMessage]
    // when each question is re-posted (a stale tab's, a lost response's)
    const older = await receiveChat(store, chat.id, { message: q1, trigger: 'submit-message' })
    const latest = await receiveChat(store, chat.id, { message: q2, trigger: 'submit-message' })
    // then
    expect([older.answered, latest.answered]).toEqual([a1, a2])
    // and a chat ending with a question (its reply never written) has no answer to give: the model runs
    const { version } = await store.getSession(chatSessionId(chat.id))
    const q3 = { id: 'q3', role: 'user' as const, parts: [{ type: 'text' as const, text: 'third' }] }
    await receiveChat(store, chat.id, { message: q3 })
    const again = await receiveChat(store, chat.id, { message: q3 })
    expect(again).toMatchObject({ duplicate: true, version: version + 1, answered: undefined })
  })

  it.each([false, true])(
    'an edit is a revision, what followed it a retraction; a regeneration retracts the reply (last only: %s)',
    async (lastOnly) => {
      // given
      const model = scriptedModel([textStep('One.'), textStep('Two.'), textStep('Two again.'), textStep('Edited answer.')])
      const chat = new TestChat({ id: `edit-${kind}-${lastOnly}`, api: chatRoute(store, model), lastOnly })
      await chat.sendMessage({ text: 'first' })
      await chat.sendMessage({ text: 'second' })
      const before = chat.list
      // when: regenerate the last reply, then edit the second question
      await chat.regenerate()
      await expectSameAsClient(chat)
      await chat.sendMessage({ text: 'second, edited', messageId: before[2]?.id as string })
      // then
      const stored = await expectSameAsClient(chat)
      expect(stored.map((m) => m.parts.map((p) => (p.type === 'text' ? p.text : p.type)).join(''))).toEqual([
        'first',
        'step-startOne.',
        'second, edited',
        'step-startEdited answer.',
      ])
      expect(stored[2]?.id).toBe(before[2]?.id)
      // nothing was overwritten: the question's first version, both retracted replies are in the history
      const { entries } = await store.transcript(chatSessionId(chat.id))
      const texts = entries.map((e) => JSON.stringify(e))
      for (const text of ['"second"', 'Two.', 'Two again.', 'second, edited']) expect(texts.some((t) => t.includes(text))).toBe(true)
    },
  )

  it('a fork holds the prefix with the same ids and goes on on its own', async () => {
    // given
    const model = scriptedModel([textStep('A1'), textStep('A2'), textStep('B2')])
    const chat = new TestChat({ id: `fork-${kind}`, api: chatRoute(store, model) })
    await chat.sendMessage({ text: 'Q1' })
    await chat.sendMessage({ text: 'Q2' })
    const original = chat.list
    // when
    const forkId = await forkChat(store, chat.id, { at: original[1]?.id as string, chatId: `fork-${kind}-b` })
    const branch = new TestChat({ id: forkId, api: chatRoute(store, model), messages: await loadChat(store, forkId) })
    expect(branch.list).toEqual(original.slice(0, 2))
    await branch.sendMessage({ text: 'Q2 on the branch' })
    // then
    await expectSameAsClient(branch)
    await expectSameAsClient(chat)
    const [a, b] = await Promise.all([loadChatState(store, chat.id), loadChatState(store, forkId)])
    expect([...b.ids].slice(0, 2)).toEqual([...a.ids].slice(0, 2))
    expect(await loadChat(store, chat.id)).toEqual(original)
  })

  it('the short form (toUIMessageStreamResponse, onFinish only) writes the reply once, final', async () => {
    // given
    const log: RouteLog = { replies: [] }
    const model = scriptedModel([toolStep('c1', 'weather', { city: 'Lima' }), textStep('Warm.')])
    const chat = new TestChat({ id: `short-${kind}`, api: chatRoute(store, model, log, 'response') })
    // when
    await chat.sendMessage({ text: 'Lima?' })
    // then
    const reply = await log.replies[0]
    expect(reply).toMatchObject({ status: 'final', writes: 1 })
    await expectSameAsClient(chat)
    expect(await replyEvents(chat.id, reply?.uiMessageId as string)).toEqual(['message_appended'])
  })
})
