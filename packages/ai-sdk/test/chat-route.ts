import { isTurnlogError, type SessionStore } from '@turnlog/core'
import {
  convertToModelMessages,
  createUIMessageStream,
  createUIMessageStreamResponse,
  stepCountIs,
  streamText,
  TypeValidationError,
  validateUIMessages,
  type LanguageModel,
} from 'ai'
import { loadChat, persistReply, receiveChat, replyChunks, type ChatRequest, type ReplyResult } from '@turnlog/ai-sdk'
import { tools, type ChatMessage } from './chat-fixture.js'

/** What a route did, for the tests to wait on (the reply's writes settle after the response ends). */
export interface RouteLog {
  readonly replies: Promise<ReplyResult>[]
}

/**
 * The README's route, `POST /api/chat`, as a web handler (`(Request) => Response`, what Next.js route
 * handlers are): the model is a parameter so the tests can script it. `mode: 'response'` is the README's
 * short form (`toUIMessageStreamResponse`, the reply written once at its end).
 */
export function chatRoute(
  store: SessionStore,
  model: LanguageModel,
  log: RouteLog = { replies: [] },
  mode: 'steps' | 'response' = 'steps',
) {
  return async (req: Request): Promise<Response> => {
    if (req.method === 'GET') {
      const chatId = new URL(req.url).searchParams.get('id') ?? ''
      return Response.json(await loadChat(store, chatId))
    }
    const body = (await req.json()) as { id: string } & ChatRequest<ChatMessage>
    let turn: Awaited<ReturnType<typeof receiveChat<ChatMessage>>>
    try {
      turn = await receiveChat<ChatMessage>(store, body.id, body as ChatRequest<ChatMessage>, {
        validate: (messages) => validateUIMessages<ChatMessage>({ messages, tools }),
      })
    } catch (error) {
      if (isTurnlogError(error, 'VERSION_CONFLICT')) return new Response('the chat changed, retry', { status: 409 })
      if (isTurnlogError(error, 'MESSAGE_CONFLICT')) return new Response(error.message, { status: 409 })
      if (isTurnlogError(error, 'INVALID_INPUT') || isTurnlogError(error, 'INVALID_MESSAGE'))
        return new Response(error.message, { status: 400 })
      if (TypeValidationError.isInstance(error)) return new Response(error.message, { status: 400 })
      throw error
    }
    if (turn.settled) {
      // a retried request the chat already answered: no model run (it would continue the stored reply); the
      // stream carries the stored reply again (turn.answered), or nothing to a client that posted the reply
      const answered = turn.answered
      const stream = createUIMessageStream<ChatMessage>({
        execute: ({ writer }) => {
          if (answered !== undefined) for (const chunk of replyChunks(answered)) writer.write(chunk)
        },
      })
      return createUIMessageStreamResponse({ stream })
    }
    const reply = persistReply(store, turn)
    ;(log.replies as Promise<ReplyResult>[]).push(reply.done)
    const result = streamText({
      model,
      messages: await convertToModelMessages(turn.forModel, { tools }),
      tools,
      stopWhen: stepCountIs(5),
      abortSignal: req.signal,
    })
    if (mode === 'response') {
      return result.toUIMessageStreamResponse({
        originalMessages: turn.messages,
        generateMessageId: reply.generateMessageId,
        onFinish: reply.onFinish,
      })
    }
    const stream = createUIMessageStream({
      originalMessages: turn.messages,
      generateId: reply.generateId,
      onStepFinish: reply.onStepFinish,
      onFinish: reply.onFinish,
      execute: ({ writer }) => writer.merge(result.toUIMessageStream()),
    })
    return createUIMessageStreamResponse({ stream })
  }
}
