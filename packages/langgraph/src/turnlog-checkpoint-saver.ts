import type { RunnableConfig } from '@langchain/core/runnables'
import {
  BaseCheckpointSaver,
  WRITES_IDX_MAP,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointTuple,
  type PendingWrite,
  type SerializerProtocol,
} from '@langchain/langgraph-checkpoint'
import { TurnlogError } from '@turnlog/core'
import { checkKnownKeys, optionKeys } from '@turnlog/core/internal'
import type { PostgresStore } from '@turnlog/postgres'
import { sql, type Kysely } from 'kysely'
import { CheckpointPlaces, StaleParent, type MessagesPlace } from './checkpoint-places.js'
import { CheckpointReader, TURNLOG_BLOB } from './checkpoint-reader.js'
import { isMirrorableMessageList } from './langchain-message-codec.js'
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

/** Every key of a {@link TurnlogCheckpointSaverConfig}: a misspelt `tenantId` would create sessions of no tenant. */
const SAVER_CONFIG_KEYS = optionKeys<TurnlogCheckpointSaverConfig>({
  store: true,
  serde: true,
  messagesChannel: true,
  tenantId: true,
  deleteThread: true,
})

/**
 * `config` itself when it is one the saver can work with; otherwise `INVALID_INPUT` naming the key at
 * fault (the store, a misspelt key, a `serde` that is no serializer, a channel or tenant that is no
 * string). Runs before `super`, so nothing of a bad config reaches LangGraph's constructor.
 */
function checkedConfig(config: TurnlogCheckpointSaverConfig): TurnlogCheckpointSaverConfig {
  const invalid = (message: string, field: string): TurnlogError => new TurnlogError('INVALID_INPUT', message, { details: { field } })
  if (typeof config !== 'object' || config === null || typeof config.store?.withTransaction !== 'function') {
    throw invalid('TurnlogCheckpointSaver needs { store } (a store from openStore)', 'store')
  }
  checkKnownKeys(config, SAVER_CONFIG_KEYS, 'config', 'TurnlogCheckpointSaver')
  const { serde, messagesChannel, tenantId } = config
  if (
    serde !== undefined &&
    (typeof serde !== 'object' || serde === null || typeof serde.dumpsTyped !== 'function' || typeof serde.loadsTyped !== 'function')
  ) {
    throw invalid('serde must be a LangGraph serializer (dumpsTyped and loadsTyped)', 'serde')
  }
  if (messagesChannel !== undefined && (typeof messagesChannel !== 'string' || messagesChannel === '')) {
    throw invalid('messagesChannel must be a non-empty string', 'messagesChannel')
  }
  if (tenantId !== undefined && typeof tenantId !== 'string') throw invalid('tenantId must be a string', 'tenantId')
  return config
}

/** How many times a put runs again (re-added message ids, see `mirrorMessages`; a parent row, or a channel version, another writer changed). */
const MAX_PUT_ATTEMPTS = 8

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
  readonly #places = new CheckpointPlaces()
  readonly #reader: CheckpointReader
  #setup: Promise<void> | undefined

  /**
   * Throws `INVALID_INPUT` without a store, for a `deleteThread` other than `'retract'` or `'redact'`, a
   * `serde` that is not a serializer, a `messagesChannel` or `tenantId` that is not a string, and for a key that is not one of the config's (`details.field` naming it: `config.tenantID`, with
   * `details.suggestion` when one is near).
   */
  constructor(config: TurnlogCheckpointSaverConfig) {
    // checked before LangGraph's constructor reads `serde` (a null config was a TypeError there)
    super(checkedConfig(config).serde)
    this.#store = config.store
    this.#reader = new CheckpointReader(config.store, this.serde, () => this.getNextVersion(undefined))
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
    await this.setup()
    const row = (await this.#reader.select(config, { latest: true }))[0]
    if (row?.session_id == null || row.session_version === null) return undefined
    return { sessionId: row.session_id, version: Number(row.session_version) }
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId: unknown = config.configurable?.['thread_id']
    if (typeof threadId !== 'string' && typeof threadId !== 'number') return undefined
    await this.setup()
    const { checkpoint_ns: ns, checkpoint_id: id } = config.configurable as Record<string, unknown>
    if (threadId !== '') {
      return this.#reader.one(String(threadId), String(ns ?? ''), typeof id === 'string' && id !== '' ? id : undefined)
    }
    const row = (await this.#reader.select(config, { latest: true }))[0]
    return row === undefined ? undefined : this.#reader.tuple(row)
  }

  override async *list(config: RunnableConfig, options: CheckpointListOptions = {}): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options
    if (limit !== undefined && (!Number.isInteger(limit) || limit < 0)) {
      throw new TurnlogError('INVALID_INPUT', 'limit must be a non-negative integer', { details: { field: 'limit' } })
    }
    await this.setup()
    const rows = await this.#reader.select(config, { before: before?.configurable?.['checkpoint_id'] as string | undefined, filter, limit })
    for (const row of rows) yield await this.#reader.tuple(row)
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
    // the checkpoint's JSON without what the row holds elsewhere: its id (a column) and its values
    const stored: Partial<Checkpoint> = { ...checkpoint }
    delete stored.channel_values
    delete stored.id
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
    const hasParent = typeof parentId === 'string' && parentId !== ''
    const parentRow = hasParent ? writeKey(thread, ns, parentId) : undefined
    const parentKey = ns === '' ? parentRow : undefined
    const attempts = new Map<string, number>()
    for (let attempt = 1; ; attempt++) {
      try {
        const done = await this.#store.atomically(async (store) => {
          const db = store.db
          // the parent's place as this saver wrote it (checked by the insert below), else read
          const known = parentRow === undefined ? undefined : this.#places.get(parentRow)
          const parent = known ?? (hasParent ? await parentPlace(db, thread, ns, parentId) : undefined)
          let ref = parent?.ref ?? null
          // a messages channel the put leaves as it was keeps its place
          let place =
            parent?.channel != null && !(parent.channel in newVersions) ? { channel: parent.channel, version: parent.version } : null
          const blobs = new Map(plain)
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
              place = { channel: this.#messagesChannel, version: String(newVersions[this.#messagesChannel]) }
            }
          }
          // the channel in turnlog has no blob row: the checkpoint row names it
          const blobRows = Object.entries(newVersions)
            .filter(([channel]) => written === undefined || channel !== this.#messagesChannel)
            .map(([channel, version]) => {
              const [type, bytes] = blobs.get(channel) ?? ['empty', null]
              return { c: channel, v: String(version), t: type, b: bytes === null ? null : base64(bytes) }
            })
          const converted =
            written === undefined || parentKey === undefined ? [] : this.#convertible(parentKey, written, parent?.ref ?? null)
          // the channels the put leaves as they were keep the parent's blob keys
          const inherited = inheritedBlobKeys(parent?.blobKeys ?? null, checkpoint.channel_versions, newVersions)
          // one statement: the channel blobs (a value another branch's differs from under the same
          // version stored under a key of its own, named by the row's blob_keys), the parent's messages
          // writes this put makes references (only rows still holding the bytes this saver wrote), the
          // checkpoint row; with a remembered parent, the row is only inserted while the parent row still
          // says what was remembered; and only when no value this statement found no row for was stored
          // by another transaction in the meantime (the insert did nothing: the put runs again, and sees it)
          const { rows } = await sql<{ blob_keys: string | null }>`
            with k as (
              select k.c, k.v, k.t, decode(k.b, 'base64') as b
                from json_to_recordset(${JSON.stringify(blobRows)}::json) as k(c text, v text, t text, b text)
            ), s as (
              select k.c, k.v, k.t, k.b, o.type is null as fresh,
                     case when o.type is null or (o.type = k.t and o.blob is not distinct from k.b) then k.v
                          else k.v || '#' || encode(sha256(convert_to(k.t, 'UTF8') || decode('00', 'hex') || coalesce(k.b, ''::bytea)), 'hex')
                     end as key
                from k left join turnlog_langgraph.blobs o
                  on o.thread_id = ${thread} and o.checkpoint_ns = ${ns} and o.channel = k.c and o.version = k.v
            ), blobs as (
              insert into turnlog_langgraph.blobs (thread_id, checkpoint_ns, channel, version, type, blob)
              select ${thread}, ${ns}, s.c, s.key, s.t, s.b from s
              on conflict (thread_id, checkpoint_ns, channel, version) do nothing
              returning channel
            ), keys as (
              select json_object_agg(x.c, x.key order by x.c) as j
                from (select s.c, s.key from s where s.key <> s.v
                      union all
                      select i.c, i.key from json_to_recordset(${JSON.stringify(inherited)}::json) as i(c text, key text)) x
            ), refs as (
              update turnlog_langgraph.writes w set type = ${TURNLOG_BLOB}, blob = convert_to(k.ref, 'UTF8')
                from json_to_recordset(${JSON.stringify(converted)}::json) as k(task_id text, idx integer, type text, b text, ref text)
               where w.thread_id = ${thread} and w.checkpoint_ns = ${ns} and w.checkpoint_id = ${parentKey === undefined ? null : parentId}
                 and w.task_id = k.task_id and w.idx = k.idx and w.type = k.type and w.blob = decode(k.b, 'base64')
            )
            insert into turnlog_langgraph.checkpoints
              (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata, session_id, session_version,
               messages_channel, messages_version, blob_keys)
            select ${thread}, ${ns}, ${checkpoint.id}, ${hasParent ? parentId : null}, ${JSON.stringify(stored)}::json,
                   ${metadataJson}::json, ${ref?.sessionId ?? null}::uuid, ${ref?.version ?? null}::bigint, ${place?.channel ?? null},
                   ${place?.version ?? null}, (select j from keys)
             where not exists (select 1 from s where s.fresh and not exists (select 1 from blobs i where i.channel = s.c))
               and ${
                 known === undefined
                   ? sql`true`
                   : sql`exists (
                     select 1 from turnlog_langgraph.checkpoints p
                      where p.thread_id = ${thread} and p.checkpoint_ns = ${ns} and p.checkpoint_id = ${parentId as string}
                        and p.session_id is not distinct from ${known.ref?.sessionId ?? null}::uuid
                        and p.session_version is not distinct from ${known.ref?.version ?? null}::bigint
                        and p.messages_channel is not distinct from ${known.channel}
                        and p.messages_version is not distinct from ${known.version}
                        and p.blob_keys::text is not distinct from ${known.blobKeys})`
               }
            on conflict (thread_id, checkpoint_ns, checkpoint_id)
            do update set checkpoint = excluded.checkpoint, metadata = excluded.metadata,
                          session_id = excluded.session_id, session_version = excluded.session_version,
                          messages_channel = excluded.messages_channel, messages_version = excluded.messages_version,
                          blob_keys = excluded.blob_keys
            returning blob_keys::text as blob_keys`.execute(db)
          const inserted = rows[0]
          if (inserted === undefined) throw new StaleParent()
          return {
            written,
            place: {
              ref,
              channel: place?.channel ?? null,
              version: place?.version ?? null,
              blobKeys: inserted.blob_keys,
            } satisfies MessagesPlace,
          }
        })
        if (done.written !== undefined) this.#cache.remember(done.written)
        this.#places.set(writeKey(thread, ns, checkpoint.id), done.place)
        if (parentKey !== undefined) this.#pending.forget(parentKey)
        break
      } catch (error) {
        if (error instanceof StaleParent) {
          if (parentRow !== undefined) this.#places.forget(parentRow)
        } else if (!(error instanceof RetryMirror)) throw error
        if (attempt >= MAX_PUT_ATTEMPTS) {
          if (error instanceof RetryMirror) throw error.cause
          throw new TurnlogError(
            'VERSION_CONFLICT',
            `the parent checkpoint or a channel version of ${checkpoint.id} kept changing during the put`,
            {
              details: { field: 'checkpoint_id' },
            },
          )
        }
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
   * list holds with the same content: each becomes a reference to the child's session and version
   * (the session left out when it is the parent checkpoint's own, `parentRef`: the reader takes the row's).
   */
  #convertible(
    parentKey: string,
    written: MirrorResult,
    parentRef: MessagesRef | null,
  ): { task_id: string; idx: number; type: string; b: string; ref: string }[] {
    const out: { task_id: string; idx: number; type: string; b: string; ref: string }[] = []
    for (const w of this.#pending.of(parentKey)) {
      if (!w.ids.every((id, i) => written.texts.get(id) === w.texts[i])) continue
      const ref: MessagesWriteRef = { session: written.ref.sessionId, version: written.ref.version, ids: w.ids, single: w.single }
      const { session, single, ...rest } = ref
      // stored without the parent checkpoint's own session, and without `single` when false
      const stored = { ...(session === parentRef?.sessionId ? {} : { session }), ...rest, ...(single ? { single } : {}) }
      out.push({ task_id: w.taskId, idx: w.idx, type: w.type, b: base64(w.bytes), ref: JSON.stringify(stored) })
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
      this.#places.forgetPrefix(`${String(threadId)}\u0000`)
      await sql`delete from turnlog_langgraph.checkpoints where thread_id = ${String(threadId)}`.execute(db)
      await sql`delete from turnlog_langgraph.blobs where thread_id = ${String(threadId)}`.execute(db)
      await sql`delete from turnlog_langgraph.writes where thread_id = ${String(threadId)}`.execute(db)
    })
  }

  /**
   * The metadata's JSON text as the serializer writes it, stored as it is: the column is `json`
   * (migration 0003), which keeps the text, `\u0000` and lone surrogates included, as turnlog keeps
   * payloads (jsonb refuses both; the stock JS Postgres saver strips NUL characters from the text
   * instead, losing them). `list`'s filter reads such rows in the client (see `CheckpointReader.select`).
   */
  async #metadataJson(metadata: CheckpointMetadata): Promise<string> {
    const [, bytes] = await this.serde.dumpsTyped(metadata)
    return new TextDecoder().decode(bytes)
  }

  get #db(): Kysely<unknown> {
    return this.#store.db
  }
}

/** The place of the messages of the checkpoint `id` as its row says, read in the put's transaction; undefined when there is no such row. */
async function parentPlace(db: Kysely<unknown>, thread: string, ns: string, id: string): Promise<MessagesPlace | undefined> {
  const { rows } = await sql<{
    session_id: string | null
    session_version: string | number | null
    messages_channel: string | null
    messages_version: string | null
    blob_keys: string | null
  }>`
    select session_id::text, session_version, messages_channel, messages_version, blob_keys::text
      from turnlog_langgraph.checkpoints
     where thread_id = ${thread} and checkpoint_ns = ${ns} and checkpoint_id = ${id}`.execute(db)
  const row = rows[0]
  if (row === undefined) return undefined
  const ref =
    row.session_id !== null && row.session_version !== null ? { sessionId: row.session_id, version: Number(row.session_version) } : null
  return { ref, channel: row.messages_channel, version: row.messages_version, blobKeys: row.blob_keys }
}

/**
 * The blob keys (migration 0004) a checkpoint takes from its parent's (`parentKeys`, the row's JSON
 * text): those of the channels the put leaves as they were (not in `newVersions`) whose version is
 * still the one the key was made for (`<version>#<hash>`).
 */
function inheritedBlobKeys(
  parentKeys: string | null,
  versions: ChannelVersions,
  newVersions: ChannelVersions,
): { c: string; key: string }[] {
  if (parentKeys === null) return []
  const keys = JSON.parse(parentKeys) as Record<string, string>
  return Object.entries(keys)
    .filter(([channel, key]) => !(channel in newVersions) && channel in versions && key.startsWith(`${String(versions[channel])}#`))
    .map(([c, key]) => ({ c, key }))
}

/** The key of a checkpoint's remembered writes (and of its remembered place). */
const writeKey = (thread: string, ns: string, checkpointId: string): string => `${thread}\u0000${ns}\u0000${checkpointId}`

const base64 = (bytes: Uint8Array): string => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64')
