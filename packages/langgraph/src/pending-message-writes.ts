import type { BaseMessage } from '@langchain/core/messages'
import { isBaseMessage } from '@langchain/core/messages'
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint'
import { encodeLangChainMessage } from './langchain-message-codec.js'

/**
 * A pending write of the messages channel as this saver stored it (a serialized copy), with the JSON
 * text of each message it holds: what a child checkpoint's `put` needs to replace the copy with a
 * reference to the same messages in turnlog.
 */
export interface RememberedWrite {
  readonly taskId: string
  readonly idx: number
  /** The stored row's serializer type and bytes (the replacement only happens while the row still holds them). */
  readonly type: string
  readonly bytes: Uint8Array
  /** The LangChain ids of the written messages, in order, and each one's stored JSON text. */
  readonly ids: readonly string[]
  readonly texts: readonly string[]
  /** The write's value was one message, not a list. */
  readonly single: boolean
}

/**
 * A pending write of the messages channel stored as a reference (`writes.type` `'turnlog'`): the
 * messages are those of `session` at `version` whose LangChain ids are `ids` (one message when
 * `single`). Written by the `put` of a child checkpoint whose messages, at its version, hold the very
 * content of the write. Stored without `session` when it is the session of the checkpoint the write
 * belongs to, and without `single` when it is false.
 */
export interface MessagesWriteRef {
  readonly session: string
  readonly version: number
  readonly ids: readonly string[]
  readonly single: boolean
}

/**
 * The messages of a write's value with their stored JSON, when the value is a message or a list of
 * messages that each carry an id and serialize to JSON; undefined otherwise (the write keeps its copy).
 */
export async function writtenMessages(
  serde: SerializerProtocol,
  value: unknown,
): Promise<{ ids: string[]; texts: string[]; single: boolean } | undefined> {
  const single = !Array.isArray(value)
  const list: unknown[] = single ? [value] : (value as unknown[])
  if (list.length === 0) return undefined
  const ids: string[] = []
  const texts: string[] = []
  for (const m of list) {
    if (!isBaseMessage(m) || typeof (m as BaseMessage).id !== 'string' || (m as BaseMessage).id === '') return undefined
    const payload = await encodeLangChainMessage(serde, m as BaseMessage)
    if (payload === undefined) return undefined
    ids.push((m as BaseMessage).id as string)
    texts.push(JSON.stringify(payload))
  }
  return { ids, texts, single }
}

/**
 * The messages-channel writes this saver stored, by checkpoint, until a child checkpoint is put (then
 * they are taken). Memory of this process only, and never trusted: the replacement statement matches
 * the row's stored bytes, so a write another process changed or replaced is left as it is. Bounded.
 */
export class PendingMessageWrites {
  readonly #writes = new Map<string, RememberedWrite[]>()
  readonly #limit: number

  constructor(limit = 10_000) {
    this.#limit = limit
  }

  /** Remembers `write`, stored on the checkpoint `key` names. */
  remember(key: string, write: RememberedWrite): void {
    const found = this.#writes.get(key)
    if (found !== undefined) {
      const others = found.filter((w) => w.taskId !== write.taskId || w.idx !== write.idx)
      this.#writes.set(key, [...others, write])
      return
    }
    if (this.#writes.size >= this.#limit) this.#writes.delete(this.#writes.keys().next().value as string)
    this.#writes.set(key, [write])
  }

  /** The writes remembered for the checkpoint `key` names. */
  of(key: string): readonly RememberedWrite[] {
    return this.#writes.get(key) ?? []
  }

  /** Forgets the writes of the checkpoint `key` names. */
  forget(key: string): void {
    this.#writes.delete(key)
  }
}
