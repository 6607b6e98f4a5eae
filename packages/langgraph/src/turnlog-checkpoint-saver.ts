import type { RunnableConfig } from '@langchain/core/runnables'
import {
  BaseCheckpointSaver,
  TASKS,
  WRITES_IDX_MAP,
  maxChannelVersion,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint'
import { TurnlogError, type Message } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { sql, type Kysely } from 'kysely'
import { decodeLangChainMessage, isMirrorableMessageList } from './langchain-message-codec.js'
import { migrateLangGraph } from './migrate-langgraph.js'
import { MirrorCache, RetryMirror, mirrorMessages, type MirrorResult } from './mirror-messages.js'
import { PendingMessageWrites, writtenMessages, type MessagesWriteRef } from './pending-message-writes.js'
import { sessionsOfThread, type MessagesRef } from './thread-sessions.js'

/** What {@link TurnlogCheckpointSaver} deletes a thread's messages with (see `deleteThread`). */
export type DeleteThreadMode = 'retract' | 'redact'

/** Constructor input of {@link TurnlogCheckpointSaver}. */
export interface TurnlogCheckpointSaverConfig {
  /** The turnlog store (Postgres or PGlite); the saver's tables go into the same database. */
  readonly store: PostgresStore
  /** LangGraph's serializer for the other channels, pending writes and the messages' payloads; default `JsonPlusSerializer`. */
  readonly serde?: SerializerProtocol
  /** The channel that lives in turnlog; default `'messages'` (`MessagesAnnotation`, `createReactAgent`). */
  readonly messagesChannel?: string
  /** Tenant of the sessions the saver creates. */
  readonly tenantId?: string
  /**
   * What `deleteThread` does to the thread's messages: `'retract'` (default) rewinds every session of
   * the thread, so the messages leave the live view and stay in the log and the audit trail;
   * `'redact'` also erases their content (GDPR erasure, `store.redact`), keeping ids and hashes.
   */
  readonly deleteThread?: DeleteThreadMode
}

/** A blob of a checkpoint row (`turnlog_langgraph.blobs`, bytes in base64). Type `turnlog`: the value lives in turnlog, at the checkpoint's session version. */
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

/** A checkpoint row of `turnlog_langgraph.checkpoints` as `#select` reads it, with its blobs and writes. */
interface CheckpointRow {
  readonly thread_id: string
  readonly checkpoint_ns: string
  readonly checkpoint_id: string
  readonly parent_checkpoint_id: string | null
  readonly checkpoint: Omit<Checkpoint, 'channel_values'> | string
  readonly metadata: Record<string, unknown> | string
  readonly session_id: string | null
  readonly session_version: string | number | null
  /** The session's current version (null when the checkpoint names none). */
  readonly head_version: string | number | null
  readonly blobs: readonly BlobJson[] | string | null
  readonly writes: readonly WriteJson[] | string | null
  /** The parent's pending sends, for a checkpoint older than v4. */
  readonly sends: readonly WriteJson[] | string | null
}

/** The blob type of a channel version that lives in turnlog. */
const TURNLOG_BLOB = 'turnlog'
/** How many times a put runs again for re-added message ids (see `mirrorMessages`). */
const MAX_MIRROR_ATTEMPTS = 8

const parseJson = <T>(value: T | string): T => (typeof value === 'string' ? (JSON.parse(value) as T) : value)
const toNumber = (value: string | number | null): number | null => (value === null ? null : Number(value))

/**
 * A LangGraph checkpoint saver on turnlog. The `messages` channel of the root namespace lives in a
 * turnlog session (one event per message change, LangChain ids kept as `externalId`); every other
 * channel, the checkpoints and the pending writes live in the `turnlog_langgraph` schema of the same
 * database, written in the same transaction as the messages. A checkpoint's messages are the session
 * as of the version the checkpoint records: `getTuple` of an old checkpoint returns
 * `store.load(session, { at: version })`. Continuing a past checkpoint is a turnlog `fork`.
 *
 * @example
 * ```ts
 * const store = await openStore({ connectionString })
 * const checkpointer = new TurnlogCheckpointSaver({ store })
 * const agent = createReactAgent({ llm, tools, checkpointSaver: checkpointer })
 * ```
 */
export class TurnlogCheckpointSaver extends BaseCheckpointSaver {
  readonly #store: PostgresStore
  readonly #messagesChannel: string
  readonly #tenantId: string | undefined
  readonly #deleteMode: DeleteThreadMode
  readonly #cache = new MirrorCache()
  readonly #pending = new PendingMessageWrites()
  #setup: Promise<void> | undefined

  constructor(config: TurnlogCheckpointSaverConfig) {
    super(config.serde)
    if (typeof config !== 'object' || config === null || typeof config.store?.withTransaction !== 'function') {
      throw new TurnlogError('INVALID_INPUT', 'TurnlogCheckpointSaver needs { store } (a store from openStore)', {
        details: { field: 'store' },
      })
    }
    this.#store = config.store
    this.#messagesChannel = config.messagesChannel ?? 'messages'
    this.#tenantId = config.tenantId
    this.#deleteMode = config.deleteThread ?? 'retract'
    if (this.#deleteMode !== 'retract' && this.#deleteMode !== 'redact') {
      throw new TurnlogError('INVALID_INPUT', "deleteThread must be 'retract' or 'redact'", { details: { field: 'deleteThread' } })
    }
  }

  /** The turnlog store the saver writes to. */
  get store(): PostgresStore {
    return this.#store
  }

  /**
   * Creates or upgrades the saver's tables (`migrateLangGraph`). Called by the first operation when the
   * caller did not; calling it first makes a schema problem surface at start-up.
   */
  async setup(): Promise<void> {
    this.#setup ??= migrateLangGraph(this.#store.db).then(
      () => undefined,
      (error: unknown) => {
        this.#setup = undefined
        throw error
      },
    )
    return this.#setup
  }

  /** The turnlog session and version holding the messages of the checkpoint `config` names (the latest without `checkpoint_id`). */
  async messagesRef(config: RunnableConfig): Promise<MessagesRef | undefined> {
    const row = (await this.#select(config, { latestOnly: true }))[0]
    if (row?.session_id == null || row.session_version === null) return undefined
    return { sessionId: row.session_id, version: Number(row.session_version) }
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId: unknown = config.configurable?.['thread_id']
    if (typeof threadId !== 'string' && typeof threadId !== 'number') return undefined
    const rows = await this.#select(config, { latestOnly: true })
    return (await this.#tuples(rows))[0]
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
      throw new TurnlogError('INVALID_INPUT', 'limit must be a non-negative integer', { details: { field: 'limit' } })
    }
    const rows = await this.#select(config, { before: before?.configurable?.['checkpoint_id'] as string | undefined, filter, limit })
    for (const tuple of await this.#tuples(rows)) yield tuple
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined)
      throw new TurnlogError('INVALID_INPUT', 'put needs config.configurable', { details: { field: 'configurable' } })
    const { thread_id: threadId, checkpoint_ns: namespace = '', checkpoint_id: parentId } = config.configurable as Record<string, unknown>
    if ((typeof threadId !== 'string' && typeof threadId !== 'number') || threadId === '') {
      throw new TurnlogError('INVALID_INPUT', 'put needs config.configurable.thread_id', { details: { field: 'thread_id' } })
    }
    const thread = String(threadId)
    const ns = String(namespace)
    await this.setup()
    const stored: Omit<Checkpoint, 'channel_values'> & { channel_values?: unknown } = { ...checkpoint }
    delete stored.channel_values
    const metadataJson = await this.#metadataJson(metadata)
    const plain = new Map<string, readonly [string, Uint8Array | null]>()
    let mirrored: unknown[] | undefined
    for (const channel of Object.keys(newVersions)) {
      const value = (checkpoint.channel_values as Record<string, unknown>)[channel]
      if (!(channel in checkpoint.channel_values)) plain.set(channel, ['empty', null])
      else if (channel === this.#messagesChannel && ns === '' && isMirrorableMessageList(value)) mirrored = value
      else {
        const [type, bytes] = await this.serde.dumpsTyped(value)
        plain.set(channel, [type, bytes])
      }
    }
    const parentKey = typeof parentId === 'string' && parentId !== '' && ns === '' ? writeKey(thread, ns, parentId) : undefined
    const attempts = new Map<string, number>()
    for (let attempt = 1; ; attempt++) {
      try {
        const mirrorResult = await this.#store.atomically(async (store): Promise<MirrorResult | undefined> => {
          const db = store.db
          const parent =
            typeof parentId === 'string' && parentId !== ''
              ? (
                  await sql<{ session_id: string | null; session_version: string | number | null }>`
                    select session_id::text, session_version from turnlog_langgraph.checkpoints
                     where thread_id = ${thread} and checkpoint_ns = ${ns} and checkpoint_id = ${parentId}`.execute(db)
                ).rows[0]
              : undefined
          let ref: MessagesRef | null =
            parent?.session_id != null && parent.session_version !== null
              ? { sessionId: parent.session_id, version: Number(parent.session_version) }
              : null
          const blobs = new Map(plain)
          const refs = new Map<string, MessagesRef>()
          let written: MirrorResult | undefined
          if (mirrored !== undefined) {
            written = await mirrorMessages(
              store,
              { threadId: thread, parent: ref, messages: mirrored as never, serde: this.serde, tenantId: this.#tenantId },
              attempts,
              this.#cache,
            )
            if (written === undefined) {
              const [type, bytes] = await this.serde.dumpsTyped(mirrored)
              blobs.set(this.#messagesChannel, [type, bytes])
            } else {
              ref = written.ref
              refs.set(this.#messagesChannel, written.ref)
            }
          }
          const blobRows = Object.entries(newVersions).map(([channel, version]) => {
            const [type, bytes] = refs.has(channel) ? [TURNLOG_BLOB, null] : (blobs.get(channel) ?? ['empty', null])
            return { c: channel, v: String(version), t: type, b: bytes === null ? null : base64(bytes) }
          })
          const converted = written === undefined || parentKey === undefined ? [] : this.#convertible(parentKey, written)
          // one statement: the channel blobs, the parent's messages writes this put makes references
          // (only rows still holding the bytes this saver wrote), the checkpoint row
          await sql`
            with blobs as (
              insert into turnlog_langgraph.blobs (thread_id, checkpoint_ns, channel, version, type, blob)
              select ${thread}, ${ns}, k.c, k.v, k.t, decode(k.b, 'base64')
                from json_to_recordset(${JSON.stringify(blobRows)}::json) as k(c text, v text, t text, b text)
              on conflict (thread_id, checkpoint_ns, channel, version) do nothing
            ), refs as (
              update turnlog_langgraph.writes w set type = ${TURNLOG_BLOB}, blob = convert_to(k.ref, 'UTF8')
                from json_to_recordset(${JSON.stringify(converted)}::json) as k(task_id text, idx integer, type text, b text, ref text)
               where w.thread_id = ${thread} and w.checkpoint_ns = ${ns} and w.checkpoint_id = ${parentKey === undefined ? null : parentId}
                 and w.task_id = k.task_id and w.idx = k.idx and w.type = k.type and w.blob = decode(k.b, 'base64')
            )
            insert into turnlog_langgraph.checkpoints
              (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, session_id, session_version)
            values (${thread}, ${ns}, ${checkpoint.id}, ${typeof parentId === 'string' && parentId !== '' ? parentId : null},
                    ${JSON.stringify(stored)}::jsonb, ${metadataJson}::jsonb, ${ref?.sessionId ?? null}::uuid, ${ref?.version ?? null})
            on conflict (thread_id, checkpoint_ns, checkpoint_id)
            do update set checkpoint = excluded.checkpoint, metadata = excluded.metadata,
                          session_id = excluded.session_id, session_version = excluded.session_version`.execute(db)
          return written
        })
        if (mirrorResult !== undefined) this.#cache.remember(mirrorResult)
        if (parentKey !== undefined) this.#pending.forget(parentKey)
        break
      } catch (error) {
        if (!(error instanceof RetryMirror) || attempt >= MAX_MIRROR_ATTEMPTS) throw error instanceof RetryMirror ? error.cause : error
      }
    }
    return { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } }
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const {
      thread_id: threadId,
      checkpoint_ns: namespace = '',
      checkpoint_id: checkpointId,
    } = (config.configurable ?? {}) as Record<string, unknown>
    if ((typeof threadId !== 'string' && typeof threadId !== 'number') || threadId === '') {
      throw new TurnlogError('INVALID_INPUT', 'putWrites needs config.configurable.thread_id', { details: { field: 'thread_id' } })
    }
    if (typeof checkpointId !== 'string' || checkpointId === '') {
      throw new TurnlogError('INVALID_INPUT', 'putWrites needs config.configurable.checkpoint_id', { details: { field: 'checkpoint_id' } })
    }
    await this.setup()
    const thread = String(threadId)
    const ns = String(namespace)
    const upsert = writes.every(([channel]) => channel in WRITES_IDX_MAP)
    const rows = await Promise.all(
      writes.map(async ([channel, value], idx) => {
        const [type, bytes] = await this.serde.dumpsTyped(value)
        const messages = channel === this.#messagesChannel && ns === '' ? await writtenMessages(this.serde, value) : undefined
        return { channel, idx: WRITES_IDX_MAP[channel] ?? idx, type, bytes: new Uint8Array(bytes), messages }
      }),
    )
    // one row per key, as one statement per write would leave it (an upsert: the last; else the first)
    const byIdx = new Map<number, (typeof rows)[number]>()
    for (const r of rows) if (upsert || !byIdx.has(r.idx)) byIdx.set(r.idx, r)
    const unique = [...byIdx.values()]
    if (unique.length === 0) return
    const values = unique.map((r) => ({ idx: r.idx, channel: r.channel, type: r.type, b: base64(r.bytes) }))
    // one statement, atomic on its own
    await sql`
      insert into turnlog_langgraph.writes (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
      select ${thread}, ${ns}, ${checkpointId}, ${taskId}, k.idx, k.channel, k.type, decode(k.b, 'base64')
        from json_to_recordset(${JSON.stringify(values)}::json) as k(idx integer, channel text, type text, b text)
      ${
        upsert
          ? sql`on conflict (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
                do update set channel = excluded.channel, type = excluded.type, blob = excluded.blob`
          : sql`on conflict (thread_id, checkpoint_ns, checkpoint_id, task_id, idx) do nothing`
      }`.execute(this.#db)
    for (const r of unique) {
      if (r.messages !== undefined)
        this.#pending.remember(writeKey(thread, ns, checkpointId), { taskId, idx: r.idx, type: r.type, bytes: r.bytes, ...r.messages })
    }
  }

  /**
   * The remembered messages writes of the checkpoint `parentKey` names whose every message the child's
   * list holds with the same content: each becomes a reference to the child's session and version.
   */
  #convertible(parentKey: string, written: MirrorResult): { task_id: string; idx: number; type: string; b: string; ref: string }[] {
    const out: { task_id: string; idx: number; type: string; b: string; ref: string }[] = []
    for (const w of this.#pending.of(parentKey)) {
      if (!w.ids.every((id, i) => written.texts.get(id) === w.texts[i])) continue
      const ref: MessagesWriteRef = { session: written.ref.sessionId, version: written.ref.version, ids: w.ids, single: w.single }
      out.push({ task_id: w.taskId, idx: w.idx, type: w.type, b: base64(w.bytes), ref: JSON.stringify(ref) })
    }
    return out
  }

  /**
   * Deletes a thread's checkpoints, channel values and pending writes. Its messages are not deleted
   * from turnlog, whose log is append-only (docs/guarantees.md, "Nothing is deleted"): every session of
   * the thread is rewound to empty (reason `langgraph: deleteThread`), so the messages leave the live
   * view and stay in the log, the transcript and the audit; with `deleteThread: 'redact'` their content
   * is also erased (`store.redact`). The thread's row stays, marked deleted, naming its sessions; the
   * same thread id used again starts a new root session. One transaction.
   */
  override async deleteThread(threadId: string): Promise<void> {
    await this.setup()
    await this.#store.atomically(async (store) => {
      const db = store.db
      const thread = await sessionsOfThread(store, String(threadId))
      if (thread !== undefined) {
        for (const session of thread.sessions) {
          this.#cache.forget(session)
          const live = (await store.load(session)).messages
          const first = live[0]
          if (first !== undefined) await store.rewind(session, { from: first.id }, { reason: 'langgraph: deleteThread' })
          if (this.#deleteMode === 'redact') {
            const { entries } = await store.transcript(session)
            for (const id of new Set(entries.map((e) => e.message.id)))
              await store.redact(session, id, { reason: 'langgraph: deleteThread' })
          }
        }
        await sql`update turnlog_langgraph.threads set deleted_at = now() where root_session_id = ${thread.root}::uuid`.execute(db)
      }
      await sql`delete from turnlog_langgraph.checkpoints where thread_id = ${String(threadId)}`.execute(db)
      await sql`delete from turnlog_langgraph.blobs where thread_id = ${String(threadId)}`.execute(db)
      await sql`delete from turnlog_langgraph.writes where thread_id = ${String(threadId)}`.execute(db)
    })
  }

  async #metadataJson(metadata: CheckpointMetadata): Promise<string> {
    const [, bytes] = await this.serde.dumpsTyped(metadata)
    // jsonb cannot hold U+0000 (the stock Postgres saver drops it the same way)
    return new TextDecoder().decode(bytes).replace(/\\u0000/g, '')
  }

  /**
   * The checkpoint rows `config` names, newest first, each with its channel blobs, its pending writes,
   * the pending sends of its parent (a checkpoint older than v4) and its session's head version: one
   * statement.
   */
  async #select(
    config: RunnableConfig,
    options: {
      latestOnly?: boolean
      before?: string | undefined
      filter?: Record<string, unknown> | undefined
      limit?: number | undefined
    },
  ): Promise<CheckpointRow[]> {
    await this.setup()
    const c = (config.configurable ?? {}) as Record<string, unknown>
    const wheres = [sql`true`]
    const threadId = c['thread_id']
    if (threadId !== undefined && threadId !== null && threadId !== '') wheres.push(sql`c.thread_id = ${String(threadId)}`)
    const ns = c['checkpoint_ns'] ?? (options.latestOnly === true ? '' : undefined)
    if (ns !== undefined && ns !== null) wheres.push(sql`c.checkpoint_ns = ${String(ns)}`)
    const id = c['checkpoint_id']
    if (typeof id === 'string' && id !== '') wheres.push(sql`c.checkpoint_id = ${id}`)
    if (options.filter !== undefined && Object.keys(options.filter).length > 0) {
      wheres.push(sql`c.metadata @> ${JSON.stringify(options.filter)}::jsonb`)
    }
    if (options.before !== undefined) wheres.push(sql`c.checkpoint_id < ${options.before}`)
    if (
      options.latestOnly === true &&
      threadId !== undefined &&
      threadId !== null &&
      threadId !== '' &&
      options.filter === undefined &&
      options.before === undefined
    ) {
      const { rows } = await sql<CheckpointRow>`
        select * from turnlog_langgraph.checkpoint_row(${String(threadId)}, ${String(ns ?? '')}, ${typeof id === 'string' && id !== '' ? id : null})`.execute(
        this.#db,
      )
      return rows
    }
    const limit = options.latestOnly === true ? 1 : options.limit
    const { rows } = await sql<CheckpointRow>`
      select * from turnlog_langgraph.checkpoint_rows c
       where ${sql.join(wheres, sql` and `)}
       order by c.checkpoint_id desc
       ${limit === undefined ? sql`` : sql`limit ${limit}`}`.execute(this.#db)
    return rows
  }

  get #db(): Kysely<unknown> {
    return this.#store.db
  }

  /** The tuples of checkpoint rows: channel values (from blobs and turnlog), pending writes (references resolved), migrated pending sends. */
  async #tuples(rows: readonly CheckpointRow[]): Promise<CheckpointTuple[]> {
    const tuples: CheckpointTuple[] = []
    for (const row of rows) {
      const checkpoint = parseJson(row.checkpoint)
      const channelVersions: Record<string, number | string> = { ...(checkpoint.channel_versions ?? {}) }
      const channelValues: Record<string, unknown> = {}
      const blobs = new Map((parseJson(row.blobs) ?? []).map((b) => [`${b.channel}\u0000${b.version}`, b]))
      const writes = parseJson(row.writes) ?? []
      const messagesAt = new Map<string, Promise<Map<string, Message<unknown>>>>()
      // the channel values and the pending writes are read concurrently (a checkpoint's messages and
      // the messages its writes name are two versions of a session: two loads, not one after the other)
      const values = Object.entries(channelVersions).map(async ([channel, version]) => {
        const blob = blobs.get(`${channel}\u0000${String(version)}`)
        if (blob === undefined || blob.type === 'empty') return undefined
        const value =
          blob.type === TURNLOG_BLOB ? await this.#messagesAt(row) : await this.serde.loadsTyped(blob.type, fromBase64(blob.blob))
        return [channel, value] as const
      })
      const pending = Promise.all(
        writes.map(async (w) => [w.task_id, w.channel, await this.#writeValue(w, messagesAt)] as CheckpointPendingWrite),
      )
      for (const entry of await Promise.all(values)) if (entry !== undefined) channelValues[entry[0]] = entry[1]
      const pendingWrites: CheckpointPendingWrite[] = await pending
      const sends = parseJson(row.sends) ?? []
      if ((checkpoint.v ?? 4) < 4 && row.parent_checkpoint_id !== null && sends.length > 0) {
        channelValues[TASKS] = await Promise.all(sends.map((w) => this.serde.loadsTyped(w.type ?? 'json', fromBase64(w.blob))))
        channelVersions[TASKS] =
          Object.keys(channelVersions).length > 0 ? maxChannelVersion(...Object.values(channelVersions)) : this.getNextVersion(undefined)
      }
      const configurable = { thread_id: row.thread_id, checkpoint_ns: row.checkpoint_ns }
      tuples.push({
        config: { configurable: { ...configurable, checkpoint_id: row.checkpoint_id } },
        checkpoint: {
          ...checkpoint,
          channel_values: channelValues,
          channel_versions: channelVersions,
          versions_seen: checkpoint.versions_seen ?? {},
        },
        metadata: (await this.serde.loadsTyped('json', JSON.stringify(parseJson(row.metadata)))) as CheckpointMetadata,
        ...(row.parent_checkpoint_id === null
          ? {}
          : { parentConfig: { configurable: { ...configurable, checkpoint_id: row.parent_checkpoint_id } } }),
        pendingWrites,
      })
    }
    return tuples
  }

  /** A pending write's value: its serialized copy, or (type `turnlog`) the messages it names, as of the version it names. */
  async #writeValue(w: WriteJson, loaded: Map<string, Promise<Map<string, Message<unknown>>>>): Promise<unknown> {
    if (w.type !== TURNLOG_BLOB) return this.serde.loadsTyped(w.type ?? 'json', fromBase64(w.blob))
    const ref = JSON.parse(new TextDecoder().decode(fromBase64(w.blob))) as MessagesWriteRef
    const key = `${ref.session}@${ref.version}`
    let byId = loaded.get(key)
    if (byId === undefined) {
      byId = this.#store
        .load(ref.session, { at: ref.version })
        .then(({ messages }) => new Map(messages.map((m) => [m.externalId ?? m.id, m] as const)))
      loaded.set(key, byId)
    }
    const messages = await byId
    const values = await Promise.all(
      ref.ids.map((id) => {
        const m = messages.get(id)
        if (m === undefined)
          throw new TurnlogError('DB_ERROR', `a pending write names message ${id}, not in session ${ref.session} at ${ref.version}`)
        return decodeLangChainMessage(this.serde, m)
      }),
    )
    return ref.single ? values[0] : values
  }

  /**
   * The messages of a checkpoint whose messages channel lives in turnlog: its session as of its
   * version, revived. When that version is the session's head (the latest checkpoint of a thread), the
   * live list (`load`, one statement on the projection) instead of the fold of the events up to it;
   * `load` returns the version it read, so a session that moved on in between is read again at the version.
   */
  async #messagesAt(row: CheckpointRow): Promise<unknown[]> {
    const version = toNumber(row.session_version)
    if (row.session_id === null || version === null)
      throw new TurnlogError('DB_ERROR', `checkpoint ${row.checkpoint_id} names no turnlog session`)
    let loaded = toNumber(row.head_version) === version ? await this.#store.load(row.session_id) : undefined
    if (loaded?.version !== version) loaded = await this.#store.load(row.session_id, { at: version })
    return Promise.all(loaded.messages.map((m) => decodeLangChainMessage(this.serde, m)))
  }
}

/** The key of a checkpoint's remembered writes. */
const writeKey = (thread: string, ns: string, checkpointId: string): string => `${thread}\u0000${ns}\u0000${checkpointId}`

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
const fromBase64 = (text: string | null): Uint8Array => (text === null ? new Uint8Array() : new Uint8Array(Buffer.from(text, 'base64')))
