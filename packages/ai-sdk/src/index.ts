/**
 * `@turnlog/ai-sdk`: persistence for Vercel AI SDK (`ai` 6) chats in the turnlog event log. `useChat` /
 * `streamText` apps: `receiveChat` records what the client posts (new messages, edits as revisions,
 * regenerations as retractions), `persistReply` stores the streamed reply (partial after its first step,
 * revised once per step, final at the end, left partial when aborted), `loadChat` returns the chat as the
 * client holds it. Server-only `generateText` loops: `startModelTurn` stores `ModelMessage`s.
 * @packageDocumentation
 */
export { chatMessageId, chatScope, chatSessionId } from './chat-ids.js'
export { generateMessageId } from './generate-message-id.js'
export { createChat, type CreateChatOptions } from './create-chat.js'
export { loadChat } from './load-chat.js'
export { loadChatState, type ChatState, type LoadChatOptions } from './load-chat-state.js'
export { receiveChat, type ChatRequest, type ChatTurn, type ReceiveChatOptions } from './receive-chat.js'
export { replyChunks } from './reply-chunks.js'
export { persistReply, type ReplyFinishEvent, type ReplyPersistence, type ReplyResult, type ReplyStepEvent } from './persist-reply.js'
export { forkChat, type ForkChatOptions } from './fork-chat.js'
export { startModelTurn, type ModelStepEvent, type ModelTurn, type ModelTurnOptions } from './model-turn.js'
