import { TurnlogError, newEventId, newSessionId, type CreateSessionOptions, type ForkOptions, type SessionId } from '@turnlog/core'
import { sql } from 'kysely'
import { jsonTextWithin } from '../batch-limits.js'
import { checkCallOptions, optionKeys } from '../check-arguments.js'
import { checkSafeText } from '../safe-text.js'
import { messageEnvelope, toFrozenJsonField, parseMessageIdArgument, parseSessionIdArgument } from '@turnlog/core/internal'
import { liveRows } from './live-rows.js'
import type { StoreContext } from './store-context.js'

/** The options of `createSession` and `fork` (any other key is refused, naming it). */
const CREATE_SESSION_OPTIONS = optionKeys<CreateSessionOptions>({ id: true, tenantId: true, metadata: true })
const FORK_OPTIONS = optionKeys<ForkOptions>({ at: true, id: true, tenantId: true, metadata: true })

/** The commands that create a session: `createSession` and `fork`. */
export class SessionOperations {
  readonly #ctx: StoreContext

  constructor(ctx: StoreContext) {
    this.#ctx = ctx
  }

  /** See `SessionStore.createSession`. */
  async createSession(options: CreateSessionOptions = {}): Promise<SessionId> {
    this.#ctx.assertOpen()
    options = checkCallOptions(options, 'createSession options', CREATE_SESSION_OPTIONS)
    const id = options.id === undefined ? newSessionId() : parseSessionIdArgument(options.id, 'options.id')
    const tenant = options.tenantId ?? null
    if (tenant !== null) checkSafeText(tenant, 'options.tenantId')
    const metadata =
      options.metadata === undefined
        ? null
        : jsonTextWithin(toFrozenJsonField(options.metadata, 'metadata'), this.#ctx.maxBatchBytes, 'metadata')
    return this.#ctx.run(async (db) => {
      const { rows } = await sql<{ session_id: string }>`
        insert into turnlog.sessions (session_id, tenant_id, metadata)
        values (${id}, ${tenant}, ${metadata}::json)
        on conflict (session_id) do nothing
        returning session_id::text`.execute(db)
      if (rows.length === 0) {
        const existing = await sql<{ tenant_id: string | null }>`
          select tenant_id from turnlog.sessions where session_id = ${id}`.execute(db)
        const row = existing.rows[0]
        // no visible row: the id is taken by a session of another tenant (row level security hides it)
        if (!row || row.tenant_id !== tenant) {
          throw new TurnlogError('SESSION_EXISTS', `session ${id} exists with another tenant`, { details: { sessionId: id } })
        }
      }
      return id
    })
  }

  /** See `SessionStore.fork`: a new session holding copies of the parent's live list up to `at`. */
  async fork(sessionId: string, options: ForkOptions): Promise<SessionId> {
    this.#ctx.assertOpen()
    const parent = parseSessionIdArgument(sessionId, 'sessionId')
    if (typeof options !== 'object' || options === null)
      throw new TurnlogError('INVALID_INPUT', 'fork needs { at }', { details: { field: 'options' } })
    options = checkCallOptions(options, 'fork options', FORK_OPTIONS)
    const at = parseMessageIdArgument(options.at, 'options.at')
    const child = options.id === undefined ? newSessionId() : parseSessionIdArgument(options.id, 'options.id')
    if (child === parent) throw new TurnlogError('INVALID_INPUT', 'a fork needs a new session id', { details: { field: 'options.id' } })
    const metadata =
      options.metadata === undefined
        ? null
        : jsonTextWithin(toFrozenJsonField(options.metadata, 'metadata'), this.#ctx.maxBatchBytes, 'metadata')
    return this.#ctx.tx(async (db) => {
      const existing = await sql<{ parent_session_id: string | null; fork_at: string | null }>`
        select parent_session_id::text, fork_at::text from turnlog.sessions where session_id = ${child}`.execute(db)
      const prior = existing.rows[0]
      if (prior) {
        if (prior.parent_session_id === parent && prior.fork_at === at) return child
        throw new TurnlogError('SESSION_EXISTS', `session ${child} already exists`, { details: { sessionId: child } })
      }
      const version = await this.#ctx.lock(db, parent)
      const tenant = await sql<{ tenant_id: string | null }>`select tenant_id from turnlog.sessions where session_id = ${parent}`.execute(
        db,
      )
      const tenantId = tenant.rows[0]?.tenant_id ?? null
      if (options.tenantId !== undefined && options.tenantId !== tenantId) {
        throw new TurnlogError('INVALID_INPUT', "a fork belongs to its parent session's tenant", { details: { field: 'options.tenantId' } })
      }
      const live = await liveRows(db, parent)
      const index = live.findIndex((r) => r.message_id === at)
      if (index < 0) {
        throw new TurnlogError('UNKNOWN_MESSAGE', `fork point ${at} is not a live message of session ${parent}`, {
          details: { sessionId: parent, messageId: at },
        })
      }
      const inherited = live.slice(0, index + 1)
      // a concurrent fork (or createSession) with the same id: wait for it, then this call is its replay
      // (same parent, same point: the id is returned) or SESSION_EXISTS; an id another tenant holds is
      // invisible here (row level security) and taken all the same
      const created = await sql<{ session_id: string }>`
        insert into turnlog.sessions (session_id, tenant_id, metadata, parent_session_id, parent_version, fork_at)
        values (${child}, ${tenantId}, ${metadata}::json, ${parent}, ${version}, ${at})
        on conflict (session_id) do nothing
        returning session_id::text`.execute(db)
      if (created.rows.length === 0) {
        const taken = await sql<{ parent_session_id: string | null; fork_at: string | null }>`
          select parent_session_id::text, fork_at::text from turnlog.sessions where session_id = ${child}`.execute(db)
        const row = taken.rows[0]
        if (row && row.parent_session_id === parent && row.fork_at === at) return child
        throw new TurnlogError('SESSION_EXISTS', `session ${child} already exists`, { details: { sessionId: child } })
      }
      const forked = JSON.stringify({ parentSessionId: parent, parentVersion: version, at, inherited: inherited.length })
      const next = await this.#ctx.write(db, child, 0, [
        { eventId: newEventId(), type: 'session_forked', messageId: null, contentHash: null, payloadText: null, dataText: forked },
      ])
      // copies of the inherited messages (current content, same ids): the payload text is copied in SQL, byte for byte;
      // a copy of a redacted message carries the placeholder, never content (the audit must know)
      const datas = inherited.map((r) =>
        JSON.stringify(
          messageEnvelope(r.data, r.partial, {
            inheritedFrom: parent,
            ...(r.scrubbed || r.data['redacted'] === true ? { redacted: true } : {}),
          }),
        ),
      )
      if (inherited.length > 0) {
        await sql`
          insert into turnlog.events (session_id, seq, event_id, type, message_id, content_hash, payload, data)
          select ${child}::uuid, ${next}::bigint + t.ord, t.event_id::uuid, 'message_appended', e.message_id, e.content_hash, e.payload, t.data
            from rows from (
                   json_array_elements_text(${JSON.stringify(inherited.map((r) => r.event_seq))}::json),
                   json_array_elements_text(${JSON.stringify(inherited.map(() => newEventId()))}::json),
                   json_array_elements(${`[${datas.join(',')}]`}::json)
                 ) with ordinality as t(src_seq, event_id, data, ord)
            join turnlog.events e on e.session_id = ${parent}::uuid and e.seq = t.src_seq::bigint
           order by t.ord`.execute(db)
        await sql`update turnlog.sessions set version = ${next + inherited.length}, updated_at = now() where session_id = ${child}`.execute(
          db,
        )
      }
      return child
    })
  }
}
