import type { z } from 'zod'

/** What the CLI, the inspect page and the audit show of a message: who, what kind, and its text. */
export interface MessagePreview {
  /** The speaker as the format names it (`user`, `assistant`, `tool`, …); `json` for an opaque payload. */
  readonly role: string
  /** What the message is: `text`, `tool_calls`, `tool_result`, `json`, or a format's own item type. */
  readonly kind: string
  /** A one-line text (not truncated: callers cut it to their width). */
  readonly text: string
}

/**
 * A message format: how turnlog reads one kind of provider payload. Everything that reads payloads
 * (validation on flush/append/import, tool-call pairing in load and the audit, `toWire` and its
 * pairing repair, previews) asks the message's format. Adding a format is one file that implements
 * this interface, fixtures, and one line in the built-in list (`format-registry.ts`), or
 * {@link registerMessageFormat} for an application's own format.
 *
 * Every method receives a payload that already passed {@link MessageFormat.schema} (deeply frozen
 * JSON) and must not throw for one; it must never mutate it.
 * @typeParam P - the payload type this format validates.
 */
export interface MessageFormat<P = unknown> {
  /** The name stored with each message of this format (`data.format`); never renamed once released. */
  readonly name: string
  /**
   * Validates a payload (a frozen JSON copy of what the caller gave). Strict about what the format
   * requires; keeps unknown fields and unknown item/part types verbatim (forward compatibility).
   */
  readonly schema: z.ZodType
  /** The tool-call ids this payload opens (calls it makes), in order. */
  toolCalls(payload: P): readonly string[]
  /** The tool-call ids this payload answers (results it carries), in order. */
  toolResults(payload: P): readonly string[]
  /**
   * The payloads `toWire(…, { repairPairing: true })` inserts after an unanswered call's block of
   * results: this format's own "interrupted" result for each id (`content` is the text to use).
   * `call` is the payload that opened the calls (for a format whose result repeats something of the
   * call, such as the tool name).
   */
  interruptedResults(toolCallIds: readonly string[], content: string, call?: P): readonly P[]
  /**
   * For a format whose messages carry their own results (a tool part whose state says it is answered):
   * the wire copy of `payload` with its calls `toolCallIds` answered in place by this format's own
   * "interrupted" result. When present, `toWire(…, { repairPairing: true })` rewrites the calling
   * message with it instead of inserting {@link MessageFormat.interruptedResults} after it. Returns a
   * fresh copy; never mutates `payload`.
   */
  answerInPlace?(payload: P, toolCallIds: readonly string[], content: string): unknown
  /**
   * For a format whose message can carry several results, or results beside other content (an
   * Anthropic user turn): the wire copy of `payload` without its
   * results for `toolCallIds` (orphans, results after the first for one call) and with only the first
   * of several results it carries for one call, or `undefined` when nothing of it is left to send.
   * Without it, `toWire(…, { repairPairing: true })` drops a message only when every result it carries
   * is dropped and otherwise sends it whole.
   */
  withoutResults?(payload: P, toolCallIds: ReadonlySet<string>): unknown
  /**
   * For a format whose message can open several calls, or calls beside other content: the wire copy
   * of `payload` without its openings of `toolCallIds` (a call id opened again after an earlier
   * message opened it) and opening every other call once (of several openings of one call here, the
   * one that carries the call's result, else the first), or `undefined` when nothing of it is left to
   * send. Without it, `toWire(…, { repairPairing: true })` drops a message only when every call it
   * opens and every result it carries is dropped, and otherwise sends it whole.
   */
  withoutCalls?(payload: P, toolCallIds: ReadonlySet<string>): unknown
  /**
   * The wire copy of `payload` with each tool-call id it opens or answers that is a key of `renames`
   * sent as that key's value (a call id called again after its earlier call was answered, renamed so
   * each call's id is sent once): in the field pairing reads, and in every other id field of the same
   * call or result that holds the same id (a chat call's `call_id` beside its `id`); an id field
   * holding another value (a Responses item id) is kept. `toWire(…, { repairPairing: true })` uses
   * it; without it a reused id is sent as it is. Returns a fresh, mutable deep copy; never mutates `payload`.
   */
  renameToolIds?(payload: P, renames: ReadonlyMap<string, string>): unknown
  /**
   * The placeholder that replaces `payload` when its message is redacted (`content` is the text to
   * show, `'[redacted]'`): a valid payload of this format without its content that keeps the
   * tool-call ids it opens and answers (a redacted result still answers its call). It must be a
   * structural redaction placeholder (`isRedactedPayload(p, name)`), which `structuralPlaceholder`
   * makes (the chat shape is `openai-chat`'s alone; the database refuses it for another format); without
   * the hook a redacted message becomes `{ redacted: true }` (right for an opaque format). Must be
   * idempotent and must not mutate `payload`.
   */
  redactedPayload?(payload: P, content: string): unknown
  /**
   * What is sent to the provider for this payload: a fresh, mutable deep copy (no shared objects with
   * the stored payload). Usually the payload itself, copied.
   */
  toWire(payload: P): unknown
  /**
   * For a format some of whose stored payloads the provider refuses back as they are (a redaction
   * placeholder of encrypted reasoning, whose signature or encrypted content the provider verifies), or
   * reads together with the messages beside them: what is sent of a run of consecutive messages of
   * this format, given the run's wire copies in order (fresh copies, free to change in place; the
   * repair's synthetic results included). Returns the copies to send, in order: some may be left out,
   * some changed. `toWire` applies it last, to every maximal run of this format's messages in what it
   * sends; without it the copies are sent as they are. It must not leave out a copy that opens or
   * answers a tool call (the repair has paired what it returns).
   */
  wireRun?(copies: unknown[]): unknown[]
  /** Who, what kind and which text, for the CLI, the inspect page and the audit. */
  preview(payload: P): MessagePreview
}
