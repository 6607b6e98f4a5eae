import { describe, expect, it } from '@jest/globals'
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { PostgresStore } from '@turnlog/postgres'
import { validateUIMessages, type UIMessage } from 'ai'
import { loadChatState } from '@turnlog/ai-sdk'
import { TestChat, readReplyStream, scriptedModel, textStep, toolStep, tools, type ChatMessage } from './chat-fixture.js'
import { chatRoute, type RouteLog } from './chat-route.js'
import { STORE_KINDS, useTestStoreOfKind } from './store-kinds.js'

/**
 * Serves a web handler (`(Request) => Response`, a Next.js route handler) on Node's `http`: the request
 * body and headers go in, the response streams out, and a client that goes away aborts the request.
 */
function serve(handler: (request: Request) => Promise<Response>): Promise<Server> {
  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    const abort = new AbortController()
    res.on('close', () => {
      if (!res.writableFinished) abort.abort(new Error('the client went away'))
    })
    void (async () => {
      const chunks: Buffer[] = []
      for await (const chunk of req) chunks.push(chunk as Buffer)
      const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
        method: req.method ?? 'GET',
        headers: Object.entries(req.headers).flatMap(([k, v]) => (typeof v === 'string' ? [[k, v] as [string, string]] : [])),
        ...(chunks.length > 0 ? { body: Buffer.concat(chunks) } : {}),
        signal: abort.signal,
      })
      const response = await handler(request)
      res.writeHead(response.status, Object.fromEntries(response.headers))
      if (response.body !== null) for await (const chunk of response.body) res.write(chunk)
      res.end()
    })().catch((error: unknown) => {
      res.writeHead(500).end(String(error))
    })
  })
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

describe.each(STORE_KINDS)('POST /api/chat over HTTP on %s', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('the README route: fetch streams a tool run, GET returns what the client holds', async () => {
    // given
    const log: RouteLog = { replies: [] }
    const model = scriptedModel([toolStep('c1', 'weather', { city: 'Kyoto' }), textStep('Kyoto: 15 °C.'), textStep('You are welcome.')])
    const server = await serve(chatRoute(store, model, log))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`
    try {
      const chat = new TestChat({ id: `http-${kind}`, api: url, lastOnly: true })
      // when
      await chat.sendMessage({ text: 'Weather in Kyoto?' })
      await chat.sendMessage({ text: 'Thanks' })
      await Promise.all(log.replies)
      const loaded = (await (await fetch(`${url}?id=${chat.id}`)).json()) as UIMessage[]
      // then
      expect(loaded).toEqual(chat.list)
      expect(loaded.map((m) => m.role)).toEqual(['user', 'assistant', 'user', 'assistant'])
      await validateUIMessages<ChatMessage>({ messages: loaded, tools })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('a retried request the chat already answered runs no model: the stored reply and the version stay as they were', async () => {
    // given an answered chat, and a model with one scripted step (a second run would fail on an empty script)
    const log: RouteLog = { replies: [] }
    const model = scriptedModel([textStep('Paris.')])
    const server = await serve(chatRoute(store, model, log))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`
    try {
      const chat = new TestChat({ id: `http-retry-${kind}`, api: url, lastOnly: true })
      await chat.sendMessage({ text: 'Capital of France?' })
      await Promise.all(log.replies)
      const before = await loadChatState(store, chat.id)
      const question = chat.list[0] as UIMessage
      // when the client's transport retries the request (its response lost), once with the message, once with the list
      const retried = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: chat.id, message: question, trigger: 'submit-message' }),
      })
      await retried.text()
      const whole = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: chat.id, messages: chat.list, trigger: 'submit-message' }),
      })
      await whole.text()
      // then nothing was written and no reply was started
      expect([retried.status, whole.status]).toEqual([200, 200])
      expect(log.replies).toHaveLength(1)
      const after = await loadChatState(store, chat.id)
      expect(after.version).toBe(before.version)
      expect(after.messages).toEqual(before.messages)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('a retried request the chat already answered gets the stored reply as a stream: same id and parts, no model run, nothing written', async () => {
    // given a chat answered with a tool run (text, the weather call and its result, text: two model steps)
    const log: RouteLog = { replies: [] }
    const model = scriptedModel([toolStep('c1', 'weather', { city: 'Oslo' }), textStep('Oslo: 12 °C.')])
    const server = await serve(chatRoute(store, model, log))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`
    try {
      const chat = new TestChat({ id: `http-replay-${kind}`, api: url, lastOnly: true })
      await chat.sendMessage({ text: 'Weather in Oslo?' })
      await Promise.all(log.replies)
      const [question, reply] = chat.list as [UIMessage, UIMessage]
      expect(reply.parts.map((p) => p.type)).toEqual(['step-start', 'text', 'tool-weather', 'step-start', 'text'])
      const before = await loadChatState(store, chat.id)
      const calls = model.doStreamCalls.length
      // when the client's transport re-posts the request (its response lost)
      const retried = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: chat.id, message: question, trigger: 'submit-message', messageId: question.id }),
      })
      // then the response is the stored reply, read by the AI SDK's client-side reader
      expect(retried.status).toBe(200)
      const replayed = await readReplyStream(retried)
      expect(replayed).toEqual(reply)
      // and no model ran, nothing was written
      expect([calls, model.doStreamCalls.length]).toEqual([2, 2])
      expect(log.replies).toHaveLength(1)
      const after = await loadChatState(store, chat.id)
      expect(after.version).toBe(before.version)
      expect(after.messages).toEqual(before.messages)
      // and the AI SDK's client that lost the response (it holds the question only) shows the reply when it retries
      const lost = new TestChat({ id: chat.id, api: url, lastOnly: true, messages: [question] })
      await lost.sendMessage()
      expect(lost.status).toBe('ready')
      expect(lost.list).toEqual(chat.list)
      // and a client that posted the reply itself (the whole list, reply included) keeps it as it is: the
      // stream adds nothing (the SDK's client would append a second copy of the parts to the message it holds)
      const holding = new TestChat({ id: chat.id, api: url, messages: chat.list })
      await holding.sendMessage()
      expect(holding.list).toEqual(chat.list)
      expect(model.doStreamCalls).toHaveLength(2)
      expect((await loadChatState(store, chat.id)).version).toBe(before.version)
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('the README route answers a list validateUIMessages refuses with 400, and nothing is stored', async () => {
    // given
    const log: RouteLog = { replies: [] }
    const server = await serve(chatRoute(store, scriptedModel([textStep('never')]), log))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`
    const chatId = `http-invalid-${kind}`
    try {
      // when a client posts a text part without its text
      const response = await fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ id: chatId, messages: [{ id: 'u1', role: 'user', parts: [{ type: 'text' }] }], trigger: 'submit-message' }),
      })
      // then
      expect(response.status).toBe(400)
      expect(await response.text()).toMatch(/Type validation failed/)
      expect(log.replies).toHaveLength(0)
      await expect(loadChatState(store, chatId)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    } finally {
      await new Promise((resolve) => server.close(resolve))
    }
  })

  it('a client that disconnects mid-reply leaves the reply partial', async () => {
    // given: the reply's second step hangs
    const log: RouteLog = { replies: [] }
    const model = scriptedModel([toolStep('c1', 'weather', { city: 'Bern' }), [...textStep('Bern is').slice(0, -2), 'hang']])
    const server = await serve(chatRoute(store, model, log))
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/chat`
    try {
      const chat = new TestChat({ id: `http-abort-${kind}`, api: url })
      // when: the client stops once the text arrived: its fetch is aborted, the connection closes
      await chat.sendAndStopAt('Bern?', 'Bern is')
      const reply = await log.replies[0]
      // then: step 1 was stored, the rest of what was streamed too, flagged partial
      expect(reply?.status).toBe('partial')
      const state = await loadChatState(store, chat.id)
      expect(state.interrupted).toEqual([reply?.uiMessageId])
      expect(JSON.stringify(state.messages[1])).toContain('"output":{"city":"Bern","celsius":12}')
      await validateUIMessages<ChatMessage>({ messages: state.messages, tools })
    } finally {
      server.closeAllConnections()
      await new Promise((resolve) => server.close(resolve))
    }
  })
})
