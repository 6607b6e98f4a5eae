import { TurnlogError, type ChatMessage } from '@turnlog/core'

/**
 * `JSON.stringify` of a message's payload, refused with `MESSAGE_TOO_LARGE` when it is longer than
 * `maxBytes` (UTF-16 code units) or than any string JavaScript can hold.
 */
export function payloadText(message: { readonly id?: string; readonly payload: ChatMessage }, maxBytes: number): string {
  let text: string
  try {
    text = JSON.stringify(message.payload)
  } catch (cause) {
    // longer than the longest string JavaScript can hold (the depth of a payload is bounded)
    if (!(cause instanceof RangeError)) throw cause
    throw new TurnlogError(
      'MESSAGE_TOO_LARGE',
      `message ${message.id ?? ''} is longer than the longest string JavaScript can hold; the limit is ${maxBytes}`,
      {
        details: { messageId: message.id ?? null, size: null, limit: maxBytes },
        cause,
      },
    )
  }
  if (text.length > maxBytes) {
    throw new TurnlogError('MESSAGE_TOO_LARGE', `message ${message.id ?? ''} is ${text.length} bytes of JSON; the limit is ${maxBytes}`, {
      details: { messageId: message.id ?? null, size: text.length, limit: maxBytes },
    })
  }
  return text
}
