import { contentHash, type Message } from '@turnlog/core'
import { CursorPersister } from './cursor-persister.js'

/** The demo's agent runtime: its in-memory live list, mirrored by a naive runtime's list. */
export class DemoRuntime {
  /** The live list of the turnlog runtime (ids intact). */
  readonly live: Message[] = []
  /** The live list of the naive runtime: the same operations, except that it cannot recognise a redelivery. */
  readonly naive: Message[] = []
  /** Every non-ephemeral message that was flushed, with the content hash of its latest version. */
  readonly expected = new Map<string, string>()
  /** What each message is, for the score's explanations. */
  readonly labels = new Map<string, string>()
  cursor = new CursorPersister()

  label(message: Message, text: string): Message {
    this.labels.set(message.id, text)
    return message
  }

  push(...messages: Message[]): void {
    this.live.push(...messages)
    this.naive.push(...messages)
  }

  /** Both runtimes replace a message by its new version (same id). */
  replace(message: Message): void {
    for (const list of [this.live, this.naive]) {
      const i = list.findIndex((m) => m.id === message.id)
      if (i >= 0) list[i] = message
    }
  }

  /** Both runtimes drop the tail after `keep` (a rewind). */
  truncateAfter(keep: Message): void {
    for (const list of [this.live, this.naive]) list.splice(list.indexOf(keep) + 1)
  }

  /** Both runtimes replace `covered` by `summary`, placed where the first covered message was. */
  compact(covered: readonly Message[], summary: Message): void {
    const ids = new Set(covered.map((m) => m.id))
    for (const list of [this.live, this.naive]) {
      const at = list.findIndex((m) => ids.has(m.id))
      const kept = list.filter((m, i) => i < at || !ids.has(m.id))
      kept.splice(at, 0, summary)
      list.splice(0, list.length, ...kept)
    }
  }

  /** Records what a flush of the live list makes durable, and lets the naive persister flush too. */
  noteFlushed(list: readonly Message[] = this.live): void {
    for (const m of list) if (m.ephemeral !== true) this.expected.set(m.id, contentHash(m))
  }
}
