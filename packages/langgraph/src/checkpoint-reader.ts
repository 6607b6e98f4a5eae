import type { RunnableConfig } from '@langchain/core/runnables'
import {
  TASKS,
  maxChannelVersion,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint'
import { TurnlogError, foldSession, liveMessages, type Message, type StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { sql } from 'kysely'
import { decodeLangChainMessage } from './langchain-message-codec.js'
import { JSONB_UNSAFE_ESCAPE, hasJsonbUnsafeEscape, jsonContains } from './json-contains.js'
import type { MessagesWriteRef } from './pending-message-writes.js'

/** The blob type of a channel version that lives in turnlog (a marker row, written by versions before 0002). */
export const TURNLOG_BLOB = 'turnlog'

/** A blob of a checkpoint row (`turnlog_langgraph.blobs`, bytes in base64). */
interface BlobJson {
  readonly channel: string
  readonly version: string
  readonly type: string
  readonly blob: string | null
}

/** A pending write of a checkpoint row (`turnlog_langgraph.writes`, bytes in base64). Type `turnlog`: a {@link MessagesWriteRef}. */
interface WriteJson {
  readonly task_id: string
  readonly idx: number
  readonly channel: string
  readonly type: string | null
  readonly blob: string
}

/** A checkpoint row as `turnlog_langgraph.checkpoint_rows` gives it, with the two columns naming its messages channel. */
export interface CheckpointRow {
  readonly thread_id: string
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
  readonly parent_checkpoint_id: string | null
  readonly checkpoint: Omit<Checkpoint, 'channel_values' | 'id'> | string
  readonly metadata: Record<string, unknown> | string
  readonly session_id: string | null
  readonly session_version: string | number | null
  /** The channel, and its version, whose value is the session at `session_version` (null: none, or a marker blob names it). */
  readonly messages_channel: string | null
  readonly messages_version: string | null
  /** The session's current version (null when the checkpoint names none). */
  readonly head_version: string | number | null
  readonly blobs: readonly BlobJson[] | string | null
  readonly writes: readonly WriteJson[] | string | null
  /** The parent's pending sends, for a checkpoint older than v4. */
  readonly sends: readonly WriteJson[] | string | null
}

/** A live row of `turnlog.load_session`, as `checkpoint_tuple` returns it. */
interface LiveJson {
  readonly id: string
  readonly position: number
  readonly data: { readonly externalId?: string }
  readonly payload: unknown
}

/** What `turnlog_langgraph.checkpoint_tuple` returns: the row and what its messages need (see migration 0002). */
interface TupleJson {
  readonly row: Omit<CheckpointRow, 'messages_channel' | 'messages_version'>
  readonly messages_channel: string | null
  readonly messages_version: string | null
  readonly live: readonly LiveJson[] | null
  readonly events: readonly StoredEvent[] | null
}

/** A message as getTuple needs it: its turnlog id, LangChain id and payload. */
type Stored = Pick<Message<unknown>, 'id' | 'payload'> & { readonly externalId?: string | undefined }

/** The messages of a session at a version, as the read that fetched them knows them (live rows, events up to a version, or none). */
interface Prefetched {
  readonly sessionId: string
  /** The live list at the session's head, `liveVersion`. */
  readonly live?: readonly Stored[] | undefined
  readonly liveVersion?: number | null
  readonly events?: readonly StoredEvent[] | undefined
}

const parseJson = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value)
const toNumber = (value: string | number | null): number | null => (value === null ? null : Number(value))

/** The reads of {@link TurnlogCheckpointSaver}: checkpoint rows and their tuples (channel values, pending writes, messages from turnlog). */
export class CheckpointReader {
  readonly #store: PostgresStore
  readonly #serde: SerializerProtocol
  readonly #firstVersion: () => number | string

  constructor(store: PostgresStore, serde: SerializerProtocol, firstVersion: () => number | string) {
    this.#store = store
    this.#serde = serde
    this.#firstVersion = firstVersion
  }

  /**
   * The tuple of one checkpoint (the latest of the thread and namespace when `checkpointId` is
   * undefined) in one statement: the row, its blobs, writes, its parent's sends and its messages
   * (`checkpoint_tuple`). Only a write referencing another session (a fork's) needs a load of its own.
   */
  async one(thread: string, ns: string, checkpointId: string | undefined): Promise<CheckpointTuple | undefined> {
    const { rows } = await sql<{ t: TupleJson | string | null }>`
      select turnlog_langgraph.checkpoint_tuple(${thread}, ${ns}, ${checkpointId ?? null}) as t`.execute(this.#store.db)
    const t = rows[0]?.t
    if (t === null || t === undefined) return undefined
    const found = parseJson(t)
    const row: CheckpointRow = { ...found.row, messages_channel: found.messages_channel, messages_version: found.messages_version }
    const prefetched: Prefetched | undefined =
      row.session_id === null
        ? undefined
        : {
            sessionId: row.session_id,
            live: found.live?.map((l) => ({ id: l.id as Message['id'], externalId: l.data.externalId, payload: l.payload })),
            liveVersion: toNumber(row.head_version),
            events: found.events ?? undefined,
          }
    return this.tuple(row, prefetched)
  }

  /**
   * The checkpoint rows `config` names, newest first (see `list`): one statement. A metadata `filter`
   * is `jsonb` containment (`@>`), in the statement for every row whose metadata text `jsonb` accepts;
   * a row holding a NUL or a lone surrogate (stored as it is, see `put`), or every row when the filter
   * holds one, is checked here ({@link jsonContains}), and the rows it drops are made up for by
   * reading on (another statement) until `limit` rows are found or none are left.
   */
  async select(
    config: RunnableConfig,
    options: { before?: string | undefined; filter?: Record<string, unknown> | undefined; limit?: number | undefined; latest?: boolean },
  ): Promise<CheckpointRow[]> {
    const c = (config.configurable ?? {}) as Record<string, unknown>
    const wheres = [sql`true`]
    const threadId = c['thread_id']
    if (threadId !== undefined && threadId !== null && threadId !== '') wheres.push(sql`v.thread_id = ${String(threadId)}`)
    const ns = c['checkpoint_ns'] ?? (options.latest === true ? '' : undefined)
    if (ns !== undefined && ns !== null) wheres.push(sql`v.checkpoint_ns = ${String(ns)}`)
    const id = c['checkpoint_id']
    if (typeof id === 'string' && id !== '') wheres.push(sql`v.checkpoint_id = ${id}`)
    const filter = options.filter !== undefined && Object.keys(options.filter).length > 0 ? options.filter : undefined
    const filterText = filter === undefined ? undefined : JSON.stringify(filter)
    // which rows the statement leaves to the client: none without a filter, every row when the filter
    // itself holds what jsonb refuses, else the rows whose metadata does
    const unchecked =
      filterText === undefined
        ? sql<boolean>`false`
        : hasJsonbUnsafeEscape(filterText)
          ? sql<boolean>`true`
          : sql<boolean>`(v.metadata::text ~ ${JSONB_UNSAFE_ESCAPE})`
    if (filterText !== undefined && !hasJsonbUnsafeEscape(filterText)) {
      wheres.push(sql`(case when ${unchecked} then true else v.metadata::jsonb @> ${filterText}::jsonb end)`)
    }
    if (options.before !== undefined) wheres.push(sql`v.checkpoint_id < ${options.before}`)
    const limit = options.latest === true ? 1 : options.limit
    const found: CheckpointRow[] = []
    for (let offset = 0; ;) {
      const want = limit === undefined ? undefined : limit - found.length
      const { rows } = await sql<CheckpointRow & { unchecked: boolean }>`
        select v.*, c.messages_channel, c.messages_version, ${unchecked} as unchecked
          from turnlog_langgraph.checkpoint_rows v
          join turnlog_langgraph.checkpoints c
            on c.thread_id = v.thread_id and c.checkpoint_ns = v.checkpoint_ns and c.checkpoint_id = v.checkpoint_id
         where ${sql.join(wheres, sql` and `)}
         order by v.checkpoint_id desc, v.thread_id, v.checkpoint_ns
         ${want === undefined ? sql`` : sql`limit ${want}`} ${offset === 0 ? sql`` : sql`offset ${offset}`}`.execute(this.#store.db)
      offset += rows.length
      for (const { unchecked: check, ...row } of rows) {
        if (!check || jsonContains(parseJson(row.metadata), filter)) found.push(row)
      }
      if (want === undefined || rows.length < want || found.length >= (limit as number)) return found
    }
  }

  /** The tuple of a checkpoint row: channel values (from blobs and turnlog), pending writes (references resolved), migrated pending sends. */
  async tuple(row: CheckpointRow, prefetched?: Prefetched): Promise<CheckpointTuple> {
    const checkpoint = parseJson(row.checkpoint)
    const channelVersions: Record<string, number | string> = { ...(checkpoint.channel_versions ?? {}) }
    const channelValues: Record<string, unknown> = {}
    const blobs = new Map((parseJson(row.blobs) ?? []).map((b) => [`${b.channel}\u0000${b.version}`, b]))
    const writes = parseJson(row.writes) ?? []
    const messagesAt = new Map<string, Promise<Map<string, Stored>>>()
    // the channel values and the pending writes are read concurrently (a checkpoint's messages and
    // the messages its writes name may be two loads: not one after the other)
    const values = Object.entries(channelVersions).map(async ([channel, version]) => {
      const blob = blobs.get(`${channel}\u0000${String(version)}`)
      const inTurnlog =
        blob?.type === TURNLOG_BLOB || (blob === undefined && row.messages_channel === channel && row.messages_version === String(version))
      if (inTurnlog) return [channel, await this.#messagesOf(row, prefetched)] as const
      if (blob === undefined || blob.type === 'empty') return undefined
      return [channel, await this.#serde.loadsTyped(blob.type, fromBase64(blob.blob))] as const
    })
    const pending = Promise.all(
      writes.map(async (w) => [w.task_id, w.channel, await this.#writeValue(w, row, messagesAt, prefetched)] as CheckpointPendingWrite),
    )
    for (const entry of await Promise.all(values)) if (entry !== undefined) channelValues[entry[0]] = entry[1]
    const pendingWrites: CheckpointPendingWrite[] = await pending
    const sends = parseJson(row.sends) ?? []
    if ((checkpoint.v ?? 4) < 4 && row.parent_checkpoint_id !== null && sends.length > 0) {
      channelValues[TASKS] = await Promise.all(sends.map((w) => this.#serde.loadsTyped(w.type ?? 'json', fromBase64(w.blob))))
      channelVersions[TASKS] =
        Object.keys(channelVersions).length > 0 ? maxChannelVersion(...Object.values(channelVersions)) : this.#firstVersion()
    }
    const configurable = { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns }
    return {
      config: { configurable: { ...configurable, checkpoint_id: row.checkpoint_id } },
      checkpoint: {
        ...checkpoint,
        id: row.checkpoint_id,
        channel_values: channelValues,
        channel_versions: channelVersions,
        versions_seen: checkpoint.versions_seen ?? {},
      },
      metadata: (await this.#serde.loadsTyped('json', JSON.stringify(parseJson(row.metadata)))) as CheckpointMetadata,
      ...(row.parent_checkpoint_id === null
        ? {}
        : { parentConfig: { configurable: { ...configurable, checkpoint_id: row.parent_checkpoint_id } } }),
      pendingWrites,
    }
  }

  /** A pending write's value: its serialized copy, or (type `turnlog`) the messages it names, as of the version it names. */
  async #writeValue(
    w: WriteJson,
    row: CheckpointRow,
    loaded: Map<string, Promise<Map<string, Stored>>>,
    prefetched: Prefetched | undefined,
  ): Promise<unknown> {
    if (w.type !== TURNLOG_BLOB) return this.#serde.loadsTyped(w.type ?? 'json', fromBase64(w.blob))
    const ref = JSON.parse(new TextDecoder().decode(fromBase64(w.blob))) as Omit<MessagesWriteRef, 'session' | 'single'> & {
      session?: string
      single?: boolean
    }
    // a reference without a session names the checkpoint's own (see `put`)
    const session = ref.session ?? row.session_id
    if (session === null) throw new TurnlogError('DB_ERROR', `a pending write of checkpoint ${row.checkpoint_id} names no turnlog session`)
    const key = `${session}@${ref.version}`
    let byId = loaded.get(key)
    if (byId === undefined) {
      byId = this.#messagesAtVersion(session, ref.version, prefetched).then(
        (messages) => new Map(messages.map((m) => [m.externalId ?? m.id, m] as const)),
      )
      loaded.set(key, byId)
    }
    const messages = await byId
    const values = await Promise.all(
      ref.ids.map((id) => {
        const m = messages.get(id)
        if (m === undefined)
          throw new TurnlogError('DB_ERROR', `a pending write names message ${id}, not in session ${session} at ${ref.version}`)
        return decodeLangChainMessage(this.#serde, m)
      }),
    )
    return ref.single ? values[0] : values
  }

  /**
   * The messages of a checkpoint whose messages channel lives in turnlog: its session as of its
   * version, revived. From what the read fetched with the row when it did; else, when that version is
   * the session's head (the latest checkpoint of a thread), the live list (`load`, one statement on
   * the projection) instead of the fold of the events up to it; `load` returns the version it read, so
   * a session that moved on in between is read again at the version.
   */
  async #messagesOf(row: CheckpointRow, prefetched: Prefetched | undefined): Promise<unknown[]> {
    const version = toNumber(row.session_version)
    if (row.session_id === null || version === null)
      throw new TurnlogError('DB_ERROR', `checkpoint ${row.checkpoint_id} names no turnlog session`)
    let messages: readonly Stored[]
    if (prefetched?.sessionId === row.session_id && (prefetched.live !== undefined || prefetched.events !== undefined)) {
      // what the read fetched with the row (one snapshot), else the store
      messages = await this.#messagesAtVersion(row.session_id, version, prefetched)
    } else {
      let loaded = toNumber(row.head_version) === version ? await this.#store.load(row.session_id) : undefined
      if (loaded?.version !== version) loaded = await this.#store.load(row.session_id, { at: version })
      messages = loaded.messages
    }
    return Promise.all(messages.map((m) => decodeLangChainMessage(this.#serde, m)))
  }

  /** The live list of `session` at `version`: from the prefetched live rows or events when they hold it, else `store.load({ at })`. */
  async #messagesAtVersion(session: string, version: number, prefetched: Prefetched | undefined): Promise<readonly Stored[]> {
    if (prefetched?.sessionId === session) {
      if (prefetched.live !== undefined && prefetched.liveVersion === version) return prefetched.live
      const events = prefetched.events
      const last = events?.[events.length - 1]
      if (events !== undefined && last !== undefined && last.seq >= version) return liveMessages(foldSession(events, { at: version }))
    }
    return (await this.#store.load(session, { at: version })).messages
  }
}

/** Bytes from base64 text (null: none). */
export const fromBase64 = (text: string | null): Uint8Array =>
  text === null ? new Uint8Array() : new Uint8Array(Buffer.from(text, 'base64'))
