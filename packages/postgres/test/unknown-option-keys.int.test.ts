/**
 * docs/errors.md (`INVALID_INPUT`): a key that is not an option of the call is refused, naming it, and
 * nothing is written or connected. Before, every options object was read for the keys the call knew and
 * the rest was ignored: `openStore({ connectionString, grupCommit: false })` opened with the group commit
 * on, and `append(session, messages, { expectedVerison: 3 })` appended without the version check, the
 * lost update turnlog exists to prevent. Each row below gives one call a misspelt (or misplaced) key,
 * everything else valid, on Postgres and on PGlite: the call must throw `INVALID_INPUT` with
 * `details.field` naming the key (and `did you mean …?` where an option is near), and the database must
 * hold exactly what it held before.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId, type TurnlogError } from '@turnlog/core'
import {
  PostgresStore,
  START_CHECKPOINT,
  Subscription,
  oldestOpenTransaction,
  openStore,
  readCommittedEvents,
  rebaseAfterRestore,
  rolesSql,
  withRetry,
  type OpenStoreConfig,
} from '@turnlog/postgres'
import { STORE_KINDS, createTestDatabase, useTestStoreOfKind, type OpenedTestStore } from '@turnlog/testing'
import { sql } from 'kysely'
import { existsSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const user = (content: string): Message => createMessage({ role: 'user', content })

/** What `call` threw (or rejected with), or `'resolved'`; a subscription it started is stopped. */
async function outcome(call: () => unknown): Promise<TurnlogError | string> {
  try {
    const result = await call()
    if (result instanceof Subscription) await result.stop()
    return 'resolved'
  } catch (error) {
    return isTurnlogError(error) ? error : String(error)
  }
}

/** Everything a refused call could have written: rows of every table a call writes. */
async function snapshot(store: PostgresStore): Promise<unknown> {
  const { rows } = await sql<Record<string, string>>`
    select (select count(*) from turnlog.events)::text as events,
           (select count(*) from turnlog.sessions)::text as sessions,
           (select count(*) from turnlog.live_messages)::text as live,
           (select string_agg(session_id::text || ':' || version::text, ',' order by session_id) from turnlog.sessions) as versions,
           (select count(*) from turnlog.subscriptions)::text as subscriptions`.execute(store.db)
  return rows[0]
}

/** One call with one wrong key: the call, the `details.field` it must name, the suggestion it must make. */
type Row = readonly [name: string, call: () => unknown, field: string, suggestion: string | undefined]

describe.each(STORE_KINDS)('a key that is not an option is INVALID_INPUT naming it, nothing written (%s)', (kind) => {
  let opened: OpenedTestStore
  useTestStoreOfKind(kind, (t) => (opened = t))

  it('in every call of the store, and in the free functions that take options', async () => {
    // given a session holding a message, and the database as it then is
    const store = opened.store
    const session: SessionId = await store.createSession()
    const m = user('kept')
    await store.append(session, [m])
    const { version } = await store.getSession(session)
    const fresh = user('new')
    const rows: Row[] = [
      ['append', () => store.append(session, [fresh], { expectedVerison: version } as never), 'options.expectedVerison', 'expectedVersion'],
      [
        'flush',
        () => store.flush(session, [m, fresh], { expectedVerison: version } as never),
        'options.expectedVerison',
        'expectedVersion',
      ],
      ['sync', () => store.sync(session, [m, fresh], { expectedversion: version } as never), 'options.expectedversion', 'expectedVersion'],
      [
        'sync compaction',
        () => store.sync(session, [fresh], { compaction: { summaryIds: [fresh.id], reasn: 'x' } } as never),
        'compaction.reasn',
        'reason',
      ],
      ['load', () => store.load(session, { att: 1 } as never), 'options.att', 'at'],
      ['state', () => store.state(session, { version: 1 } as never), 'options.version', undefined],
      ['events', () => outcomeOfEvents(store.events(session, { toseq: 1 } as never)), 'options.toseq', 'toSeq'],
      ['sessions', () => store.sessions({ limt: 1 } as never), 'options.limt', 'limit'],
      ['createSession', () => store.createSession({ tenant: 'acme' } as never), 'options.tenant', 'tenantId'],
      [
        'rewind',
        () => store.rewind(session, { from: m.id }, { expectedVerison: version } as never),
        'options.expectedVerison',
        'expectedVersion',
      ],
      ['rewind target', () => store.rewind(session, { from: m.id, reason: 'undo' } as never), 'target.reason', undefined],
      [
        'compact',
        () => store.compact(session, { covered: [m.id], summary: fresh, expectedVerison: version } as never),
        'input.expectedVerison',
        'expectedVersion',
      ],
      [
        'revise',
        () => store.revise(session, m.id, { role: 'user', content: 'edited' }, { staus: 'partial' } as never),
        'options.staus',
        'status',
      ],
      [
        'finalize',
        () => store.finalize(session, m.id, { role: 'user', content: 'edited' }, { status: 'partial' } as never),
        'options.status',
        undefined,
      ],
      ['fork', () => store.fork(session, { at: m.id, metaData: { a: 1 } } as never), 'options.metaData', 'metadata'],
      ['redact', () => store.redact(session, m.id, { reasn: 'gdpr' } as never), 'options.reasn', 'reason'],
      ['rebuild', () => store.rebuild({ verfy: true } as never), 'options.verfy', 'verify'],
      ['oldestOpenTransaction', () => store.oldestOpenTransaction({ scop: 'database' } as never), 'options.scop', 'scope'],
      ['findSessionIds', () => store.findSessionIds(session.slice(0, 8), { limitt: 1 } as never), 'options.limitt', 'limit'],
      ['importSessions', () => store.importSessions([], { onSesion: () => {} } as never), 'options.onSesion', 'onSession'],
      [
        'subscribe config',
        () => store.subscribe({ name: 'typo', fliter: { sessionId: session } } as never, () => {}),
        'config.fliter',
        'filter',
      ],
      [
        'subscribe filter',
        () => store.subscribe({ name: 'typo', filter: { sessionID: session } } as never, () => {}),
        'filter.sessionID',
        'sessionId',
      ],
      [
        'subscribe options',
        () => store.subscribe({ name: 'typo' }, () => {}, { batchsize: 10 } as never),
        'options.batchsize',
        'batchSize',
      ],
      [
        'subscribe backoff',
        () => store.subscribe({ name: 'typo' }, () => {}, { backoff: { factr: 3 } } as never),
        'options.backoff.factr',
        'factor',
      ],
      ['withRetry', () => withRetry(() => store.append(session, [fresh]), { attempt: 1 } as never), 'options.attempt', 'attempts'],
      ['readCommittedEvents', () => readCommittedEvents(store.db, START_CHECKPOINT, { limt: 1 } as never), 'options.limt', 'limit'],
      [
        'oldestOpenTransaction()',
        () => oldestOpenTransaction(store.db, { scope: 'database', all: true } as never),
        'options.all',
        undefined,
      ],
      ['rebaseAfterRestore', () => rebaseAfterRestore(store, { forse: true } as never), 'options.forse', 'force'],
      ['rolesSql', () => rolesSql({ migrater: 'app' } as never), 'options.migrater', 'migrator'],
      [
        'new PostgresStore',
        () => new PostgresStore({ db: store.db, root: store.db, flavor: kind, grupCommit: false } as never),
        'init.grupCommit',
        'groupCommit',
      ],
    ]
    const before = await snapshot(store)

    // when each call is made with its wrong key
    const found = []
    for (const [name, call] of rows) {
      const error = await outcome(call)
      found.push(
        typeof error === 'string'
          ? { name, error }
          : {
              name,
              code: error.code,
              field: error.details['field'],
              suggestion: error.details['suggestion'],
              says: error.message.includes(`did you mean`),
            },
      )
    }

    // then each is INVALID_INPUT naming the key (and the option it meant, where one is near), and nothing was written
    expect(found).toEqual(
      rows.map(([name, , field, suggestion]) => ({ name, code: 'INVALID_INPUT', field, suggestion, says: suggestion !== undefined })),
    )
    expect(await snapshot(store)).toEqual(before)
    // the version check the misspelt key asked for is still there when spelt right
    expect((await outcome(() => store.append(session, [fresh], { expectedVersion: version - 1 }))) as TurnlogError).toMatchObject({
      code: 'VERSION_CONFLICT',
    })
  })

  it('documented choice: a key whose value is undefined is absent, as an option given undefined is ({ ...opts } spreads pass)', async () => {
    // given a session
    const store = opened.store
    const session = await store.createSession()
    const spread: Record<string, unknown> = { expectedVersion: undefined, reason: undefined, expectedVerison: undefined }

    // when options carry unset fields, known or not
    const appended = await store.append(session, [user('one')], spread as never)
    const loaded = await store.load(session, { at: undefined, att: undefined } as never)

    // then the calls run as without them
    expect(appended.appended).toHaveLength(1)
    expect(loaded.messages).toHaveLength(1)
  })
})

/** Drains an `events` iterator (its options are checked when it is first read). */
async function outcomeOfEvents(events: AsyncIterable<unknown>): Promise<void> {
  for await (const e of events) void e
}

describe('openStore: a key that is not an option of its way to the database is INVALID_INPUT, before anything connects', () => {
  // nothing listens there: a config that got as far as connecting would fail with a database error instead
  const nowhere = 'postgres://turnlog@127.0.0.1:1/nowhere'

  it.each<[string, Record<string, unknown>, string, string | undefined]>([
    ['a misspelt option', { connectionString: nowhere, grupCommit: false }, 'config.grupCommit', 'groupCommit'],
    ['a misspelt limit', { connectionString: nowhere, maxMessagesBytes: 8 }, 'config.maxMessagesBytes', 'maxMessageBytes'],
    [
      'a misspelt groupCommit setting',
      { connectionString: nowhere, groupCommit: { maxBatch: 4 } },
      'config.groupCommit.maxBatch',
      'maxBatches',
    ],
    ['a misspelt telemetry setting', { connectionString: nowhere, telemetry: { tracr: {} } }, 'config.telemetry.tracr', 'tracer'],
    [
      'an option of another way (a pg.Pool takes no directConnection)',
      { pool: { connect() {}, query() {}, on() {} }, directConnection: true },
      'config.directConnection',
      undefined,
    ],
    [
      'an option of another way (a kysely instance takes no pool settings)',
      { kysely: { executeQuery() {}, transaction() {}, destroy() {} }, dataDir: '/tmp/x' },
      'config.dataDir',
      undefined,
    ],
  ])('%s', async (_, config, field, suggestion) => {
    // when openStore gets the config
    const error = await outcome(() => openStore(config as unknown as OpenStoreConfig))

    // then it refuses it, naming the key
    expect(typeof error === 'string' ? error : [error.code, error.details['field'], error.details['suggestion']]).toEqual([
      'INVALID_INPUT',
      field,
      suggestion,
    ])
  })

  it('embedded with a data directory: the misspelt key is refused before the directory is made', async () => {
    // given a data directory that does not exist yet
    const parent = mkdtempSync(join(tmpdir(), 'turnlog-unknown-key-'))
    try {
      const dataDir = join(parent, 'db')

      // when the config holds a misspelt key
      const error = await outcome(() => openStore({ embedded: true, dataDir, migrat: false } as never))

      // then it is refused and nothing was created
      expect(typeof error === 'string' ? error : [error.code, error.details['field'], error.message]).toEqual([
        'INVALID_INPUT',
        'config.migrat',
        expect.stringContaining('did you mean migrate?'),
      ])
      expect(existsSync(dataDir)).toBe(false)
    } finally {
      rmSync(parent, { recursive: true, force: true })
    }
  })

  it('kept open on purpose: pool settings beside connectionString go to pg.Pool as they are', async () => {
    // given a database
    const db = await createTestDatabase()
    try {
      // when the pool settings hold a key turnlog does not list (pg.Pool takes many, and ignores what it does not know)
      const store = await openStore({
        connectionString: db.connectionString,
        pool: { max: 2, application_name: 'unknown-keys', idle_in_transaction_session_timeout: 5000 },
      })

      // then the store opens and works
      try {
        const session = await store.createSession()
        expect((await store.append(session, [user('hi')])).appended).toHaveLength(1)
      } finally {
        await store.close()
      }
    } finally {
      await db.drop()
    }
  })
})
