import { newMessageId } from '@turnlog/core'

/**
 * The server-side id generator for assistant replies (`generateMessageId` of `toUIMessageStreamResponse`,
 * `generateId` of `createUIMessageStream`): mints a turnlog id, a UUIDv7, so reply ids are unique,
 * time-ordered and minted before anything is stored, as the AI SDK's persistence guide asks. The reply
 * is stored under {@link chatMessageId} of this id, as every `UIMessage` of the chat is, so one rule maps
 * every client-visible id to its turnlog id.
 */
export function generateMessageId(): string {
  return newMessageId()
}
