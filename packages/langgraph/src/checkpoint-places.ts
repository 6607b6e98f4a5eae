import type { MessagesRef } from './thread-sessions.js'

/**
 * What a checkpoint row says of where its values are: the turnlog session and version its messages
 * are (`ref`, the base of the next checkpoint's messages), the channel and channel version whose value
 * that is (null when the checkpoint's messages channel is stored as a blob, or it has none), and the
 * blob keys of the channels a branch stored under a key of their own (`blobKeys`, migration 0004).
 */
export interface MessagesPlace {
  readonly ref: MessagesRef | null
  readonly channel: string | null
  readonly version: string | null
  /** The row's `blob_keys` as its JSON text (`{ channel: key }`), null when every channel is under its plain version. */
  readonly blobKeys: string | null
}

/**
 * The {@link MessagesPlace} of each checkpoint this saver put recently, so that the `put` of its
 * child needs no read of it: never trusted, the child's insert checks, in its statement, that the
 * parent row still says the same (else the put runs again with the row read). Memory of this process
 * only; bounded, oldest first out.
 */
export class CheckpointPlaces {
  readonly #places = new Map<string, MessagesPlace>()
  readonly #limit: number

  constructor(limit = 10_000) {
    this.#limit = limit
  }

  /** The place remembered for the checkpoint `key` names. */
  get(key: string): MessagesPlace | undefined {
    return this.#places.get(key)
  }

  /** Remembers a committed checkpoint's place. */
  set(key: string, place: MessagesPlace): void {
    this.#places.delete(key)
    if (this.#places.size >= this.#limit) this.#places.delete(this.#places.keys().next().value as string)
    this.#places.set(key, place)
  }

  /** Forgets one checkpoint's place. */
  forget(key: string): void {
    this.#places.delete(key)
  }

  /** Forgets every checkpoint whose key starts with `prefix` (a thread's). */
  forgetPrefix(prefix: string): void {
    for (const key of [...this.#places.keys()]) if (key.startsWith(prefix)) this.#places.delete(key)
  }
}

/**
 * Thrown inside a put's transaction when the parent checkpoint row no longer says what this saver
 * remembered, or when another transaction stored a value under a channel version the put's statement
 * found free: the put runs again, reading both.
 */
export class StaleParent extends Error {
  constructor() {
    super('the parent checkpoint, or a channel version, changed since this saver read it')
    this.name = 'StaleParent'
  }
}
