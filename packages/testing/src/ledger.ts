/**
 * An independent ledger of what writers meant to store, for fault and soak tests: a plain model of the
 * rules (append once, rewind drops the tail, a compaction puts its summary where the first covered
 * message was, a revision replaces content, a fork copies the live prefix) that never asks the store
 * how to compute anything. {@link Ledger.verify} then reads the store and counts what was lost,
 * duplicated, invented or misordered.
 * @packageDocumentation
 */
import { GENESIS_HASH, eventChainHash, type Message, type SessionStore } from '@turnlog/core'

/** What the ledger knows of one live message. */
interface Content {
  /** `JSON.stringify` of the current payload: stored text must round-trip to exactly this. */
  payloadText: string
  partial: boolean
}

interface SessionModel {
  /** Every id whose `message_appended` event this session's log must hold exactly once → its writer. */
  readonly written: Map<string, string>
  /** Per writer, the ids it appended, in the order it appended them. */
  readonly byWriter: Map<string, string[]>
  /** The live list, in order. */
  live: string[]
  readonly content: Map<string, Content>
}

/** What {@link Ledger.verify} found. Every count but `sessions`, `messages` and `events` should be 0. */
export interface LedgerReport {
  /** Sessions checked. */
  readonly sessions: number
  /** Messages the ledger expects in the logs (inherited fork copies included). */
  readonly messages: number
  /** Events read. */
  readonly events: number
  /** Expected messages with no `message_appended` event. */
  readonly lost: number
  /** Extra `message_appended` events of an id beyond its first, summed. */
  readonly duplicated: number
  /** `message_appended` events of ids no writer reported as stored. */
  readonly phantom: number
  /** Sessions where some writer's messages are not in the order it appended them. */
  readonly outOfOrder: number
  /** Sessions whose `load()` differs from the ledger's live list (ids, order, content or status). */
  readonly liveMismatches: number
  /** Sessions whose seqs are not 1..n or whose hash chain does not recompute. */
  readonly brokenChains: number
  /** The first problems, described (at most 20). */
  readonly problems: readonly string[]
}

const payloadText = (message: Message): string => JSON.stringify(message.payload)

/** The ledger. Tell it what each acknowledged call did; then {@link Ledger.verify} the store. */
export class Ledger {
  readonly #sessions = new Map<string, SessionModel>()

  #model(sessionId: string): SessionModel {
    let model = this.#sessions.get(sessionId)
    if (!model) {
      model = { written: new Map(), byWriter: new Map(), live: [], content: new Map() }
      this.#sessions.set(sessionId, model)
    }
    return model
  }

  #add(model: SessionModel, message: Message, writer: string): boolean {
    if (message.ephemeral === true || model.written.has(message.id)) return false
    model.written.set(message.id, writer)
    const list = model.byWriter.get(writer) ?? []
    list.push(message.id)
    model.byWriter.set(writer, list)
    model.content.set(message.id, { payloadText: payloadText(message), partial: message.status === 'partial' })
    return true
  }

  /** A session exists (created, empty). */
  created(sessionId: string): void {
    this.#model(sessionId)
  }

  /** Sessions the ledger knows. */
  get sessionIds(): readonly string[] {
    return [...this.#sessions.keys()]
  }

  /**
   * An `append` or `flush` was acknowledged: its non-ephemeral messages the session did not have are
   * now at the end of the log and of the live list, in this order. `writer` names who sent them
   * (order is checked per writer when several write one session).
   */
  appended(sessionId: string, messages: readonly Message[], writer = 'writer'): void {
    const model = this.#model(sessionId)
    for (const m of messages) if (this.#add(model, m, writer)) model.live.push(m.id)
  }

  /** A rewind retracted these ids (they leave the live list; their events stay). */
  retracted(sessionId: string, ids: readonly string[]): void {
    const model = this.#model(sessionId)
    const gone = new Set(ids)
    model.live = model.live.filter((id) => !gone.has(id))
  }

  /** A compaction replaced `covered` with `summary`, placed where the first covered live message was. */
  compacted(sessionId: string, covered: readonly string[], summary: readonly Message[], writer = 'writer'): void {
    const model = this.#model(sessionId)
    const gone = new Set(covered)
    const at = model.live.findIndex((id) => gone.has(id))
    for (const m of summary) this.#add(model, m, writer)
    const kept = model.live.filter((id) => !gone.has(id))
    // nothing before the first covered message is covered: the summary goes at that same index
    kept.splice(at < 0 ? kept.length : at, 0, ...summary.map((m) => m.id))
    model.live = kept
  }

  /** A live message got new content (and streaming status). */
  revised(sessionId: string, messageId: string, payload: unknown, status: 'partial' | 'final' = 'final'): void {
    const model = this.#model(sessionId)
    model.content.set(messageId, { payloadText: JSON.stringify(payload), partial: status === 'partial' })
  }

  /** A partial message became final without new content. */
  finalized(sessionId: string, messageId: string): void {
    const content = this.#model(sessionId).content.get(messageId)
    if (content) content.partial = false
  }

  /** `child` was forked from `parent` at live message `at`: it starts with copies of the live prefix. */
  forked(parent: string, child: string, at: string): void {
    const from = this.#model(parent)
    const model = this.#model(child)
    const index = from.live.indexOf(at)
    if (index < 0) throw new Error(`ledger: fork point ${at} is not live in ${parent}`)
    for (const id of from.live.slice(0, index + 1)) {
      model.written.set(id, 'fork')
      const list = model.byWriter.get('fork') ?? []
      list.push(id)
      model.byWriter.set('fork', list)
      const content = from.content.get(id)
      if (content) model.content.set(id, { ...content })
      model.live.push(id)
    }
  }

  /** The live ids the ledger expects. */
  live(sessionId: string): readonly string[] {
    return [...this.#model(sessionId).live]
  }

  /**
   * Reads every session the ledger knows from `store` (its events and its `load()`), and counts lost,
   * duplicated, phantom and misordered messages, live-list mismatches and broken hash chains.
   */
  async verify(store: SessionStore): Promise<LedgerReport> {
    let messages = 0
    let events = 0
    let lost = 0
    let duplicated = 0
    let phantom = 0
    let outOfOrder = 0
    let liveMismatches = 0
    let brokenChains = 0
    const problems: string[] = []
    const problem = (text: string): void => {
      if (problems.length < 20) problems.push(text)
    }
    for (const [sessionId, model] of this.#sessions) {
      messages += model.written.size
      const counts = new Map<string, number>()
      const firstSeen: string[] = []
      let prev = GENESIS_HASH
      let expectedSeq = 1
      let chainOk = true
      for await (const e of store.events(sessionId)) {
        events++
        if (e.seq !== expectedSeq++) chainOk = false
        const link = eventChainHash(prev, e)
        if (link !== e.hash) chainOk = false
        prev = e.hash
        if (e.type !== 'message_appended') continue
        const n = (counts.get(e.messageId) ?? 0) + 1
        counts.set(e.messageId, n)
        if (n === 1) firstSeen.push(e.messageId)
      }
      if (!chainOk) {
        brokenChains++
        problem(`${sessionId}: seqs or hash chain broken`)
      }
      for (const id of model.written.keys()) {
        if (!counts.has(id)) {
          lost++
          problem(`${sessionId}: lost ${id}`)
        }
      }
      for (const [id, n] of counts) {
        if (n > 1) {
          duplicated += n - 1
          problem(`${sessionId}: ${id} appended ${n} times`)
        }
        if (!model.written.has(id)) {
          phantom++
          problem(`${sessionId}: phantom ${id}`)
        }
      }
      for (const [writer, ids] of model.byWriter) {
        const mine = new Set(ids)
        const logged = firstSeen.filter((id) => mine.has(id))
        if (logged.length === ids.length && logged.some((id, i) => id !== ids[i])) {
          outOfOrder++
          problem(`${sessionId}: writer ${writer}'s messages are out of order`)
          break
        }
      }
      const loaded = await store.load(sessionId)
      const ids = loaded.messages.map((m) => m.id as string)
      // concurrent writers of one session interleave in commit order, which only the log knows: their
      // live list is compared as a set (each writer's own order is checked above)
      const concurrent = [...model.byWriter.keys()].filter((w) => w !== 'fork').length > 1
      const expected = concurrent ? [...model.live].sort() : model.live
      const actual = concurrent ? [...ids].sort() : ids
      const sameIds = actual.length === expected.length && actual.every((id, i) => id === expected[i])
      const sameContent = loaded.messages.every((m) => {
        const c = model.content.get(m.id)
        return c !== undefined && c.payloadText === payloadText(m) && c.partial === (m.status === 'partial')
      })
      if (!sameIds || !sameContent) {
        liveMismatches++
        problem(
          `${sessionId}: live list differs (${sameIds ? 'content or status' : `ids: store ${ids.length}, ledger ${model.live.length}`})`,
        )
      }
    }
    return {
      sessions: this.#sessions.size,
      messages,
      events,
      lost,
      duplicated,
      phantom,
      outOfOrder,
      liveMismatches,
      brokenChains,
      problems,
    }
  }
}
