/**
 * Attacks the store's lifecycle and read consistency (errors.md `STORE_CLOSED`, subscriptions.md
 * `stop()`/`store.close()`): every public call and every exported admin function on a closed store is
 * `STORE_CLOSED` on Postgres and PGlite (before, `listSubscriptions`, `rebaseSubscription`,
 * `dropSubscription` and `rebaseAfterRestore` failed with the destroyed driver's `DB_ERROR`); `close()`
 * while a subscription handler runs lets that call finish and commits its checkpoint, plain and
 * transactional; and `transcript` under concurrent writers is one consistent view (before, its list of
 * other events came from a second read and could hold a rewind past its `version` while the rewound
 * message still showed live).
 */
import type { PGlite } from '@electric-sql/pglite'
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type SessionId } from '@turnlog/core'
import {
  dropSubscription,
  listSubscriptions,
  openStore,
  rebaseAfterRestore,
  rebaseSubscription,
  type PostgresStore,
} from '@turnlog/postgres'
import {
  STORE_KINDS,
  caught,
  createTestDatabase,
  openMigratedPGlite,
  openTestStore,
  useTestStoreOfKind,
  type TestDatabase,
} from '@turnlog/testing'

describe.each(STORE_KINDS)('a closed store (%s)', (kind) => {
  it('answers every call and every admin function with STORE_CLOSED, and a second close() resolves', async () => {
    // given a store with a session, a message and a subscription checkpoint, then closed
    const opened = await openTestStore(kind)
    const store = opened.store
    const session = await store.createSession()
    const m = createMessage({ role: 'user', content: 'stored' })
    await store.append(session, [m])
    const sub = store.subscribe({ name: 'closed-store' }, () => {}, { pollIntervalMs: 20 })
    await sub.catchUp()
    await sub.stop()
    await store.close()
    const other = createMessage({ role: 'user', content: 'late' })
    const calls: Record<string, () => unknown> = {
      createSession: () => store.createSession(),
      getSession: () => store.getSession(session),
      sessions: () => store.sessions(),
      append: () => store.append(session, [other]),
      appendDuplicate: () => store.append(session, [m]),
      flush: () => store.flush(session, [m, other]),
      flushKnown: () => store.flush(session, [m]),
      sync: () => store.sync(session, [m]),
      load: () => store.load(session),
      loadAt: () => store.load(session, { at: 1 }),
      events: async () => {
        for await (const e of store.events(session)) void e
      },
      state: () => store.state(session),
      transcript: () => store.transcript(session),
      rewind: () => store.rewind(session, { from: m.id }),
      compact: () => store.compact(session, { covered: [m.id], summary: createMessage({ role: 'user', content: 'summary' }) }),
      revise: () => store.revise(session, m.id, { role: 'user', content: 'changed' }),
      finalize: () => store.finalize(session, m.id),
      fork: () => store.fork(session, { at: m.id }),
      rebuild: () => store.rebuild(),
      redact: () => store.redact(session, m.id),
      conflicts: () => store.conflicts(session),
      subscribe: () => store.subscribe({ name: 'closed-store' }, () => {}).done,
      oldestOpenTransaction: () => store.oldestOpenTransaction(),
      importSessions: () => store.importSessions([]),
      atomically: () => store.atomically(async () => 1),
      findSessionIds: () => store.findSessionIds('ab'),
      countConflicts: () => store.countConflicts(),
      listSubscriptions: () => listSubscriptions(store),
      rebaseSubscription: () => rebaseSubscription(store, 'closed-store', { toStart: true }),
      dropSubscription: () => dropSubscription(store, 'closed-store'),
      rebaseAfterRestore: () => rebaseAfterRestore(store),
    }
    // when each is called
    const codes: Record<string, unknown> = {}
    for (const [name, call] of Object.entries(calls)) {
      const error = await caught(() => call())
      codes[name] = (error as { code?: unknown } | undefined)?.code ?? error
    }
    // then each is STORE_CLOSED
    expect(codes).toEqual(Object.fromEntries(Object.keys(calls).map((name) => [name, 'STORE_CLOSED'])))
    await expect(store.close()).resolves.toBeUndefined()
    await opened.close()
  }, 60_000)
})

describe('close() while a subscription handler runs', () => {
  let pglite: PGlite
  let database: TestDatabase
  beforeAll(async () => {
    database = await createTestDatabase({ migrated: true })
    pglite = await openMigratedPGlite()
  }, 60_000)
  afterAll(async () => {
    await pglite.close()
    await database.drop()
  })

  const cases = STORE_KINDS.flatMap((kind) => [false, true].map((transactional) => ({ kind, transactional })))
  it.each(cases)(
    '$kind, transactional $transactional: the call finishes, its checkpoint commits, catchUp is SUBSCRIPTION_STOPPED',
    async ({ kind, transactional }) => {
      // given five events and a handler that is inside the third one
      const open = (): Promise<PostgresStore> =>
        kind === 'pglite' ? openStore({ pglite }) : openStore({ connectionString: database.connectionString })
      const store = await open()
      const session: SessionId = await store.createSession()
      await store.append(
        session,
        [1, 2, 3, 4, 5].map((i) => createMessage({ role: 'user', content: `m${String(i)}` })),
      )
      let entered!: () => void
      const inside = new Promise<void>((resolve) => (entered = resolve))
      let release!: () => void
      const held = new Promise<void>((resolve) => (release = resolve))
      const seen: number[] = []
      const name = `close-mid-handler-${kind}-${String(transactional)}`
      const sub = store.subscribe(
        { name, filter: { sessionId: session } },
        async (event) => {
          seen.push(event.seq)
          if (event.seq === 3) {
            entered()
            await held
          }
        },
        { pollIntervalMs: 20, transactional },
      )
      const catchUp = sub.catchUp().then(
        () => 'caught up',
        (e: { code?: string }) => e.code,
      )
      await inside

      // when the store closes while the handler waits, and the handler then returns
      const closed = store.close().then(() => 'closed')
      await new Promise((resolve) => setTimeout(resolve, 50))
      release()

      // then close waited for the call, nothing after it was delivered, and the checkpoint is after it
      expect(await closed).toBe('closed')
      expect(await catchUp).toBe('SUBSCRIPTION_STOPPED')
      await expect(sub.done).resolves.toBeUndefined()
      expect(sub.state).toBe('stopped')
      expect(seen).toEqual([1, 2, 3])
      const again = await open()
      try {
        const stored = (await listSubscriptions(again)).find((s) => s.name === name)
        expect(stored).toMatchObject({ delivered: 3, checkpoint: sub.checkpoint, active: false })
      } finally {
        await again.close()
      }
    },
    60_000,
  )
})

describe('transcript under concurrent writers', () => {
  let store: PostgresStore
  useTestStoreOfKind('postgres', (t) => ({ store } = t))

  it('never lists an event past its version, and its entries agree with its events', async () => {
    // given a session a writer keeps appending to and rewinding
    const session = await store.createSession()
    await store.append(session, [createMessage({ role: 'user', content: 'start' })])
    let stop = false
    const writer = (async () => {
      while (!stop) {
        const m = createMessage({ role: 'user', content: 'rewound' })
        await store.append(session, [m])
        await store.rewind(session, { from: m.id })
      }
    })()
    // when transcripts are read meanwhile
    const inconsistent: string[] = []
    try {
      for (let i = 0; i < 150; i++) {
        const t = await store.transcript(session)
        const beyond = t.events.filter((e) => e.seq > t.version).length + t.entries.filter((e) => e.seq > t.version).length
        // a retraction listed in events must show as retracted in the entries
        const retracted = new Set(t.events.flatMap((e) => (e.type === 'messages_retracted' ? e.data.ids : [])))
        const liveButRetracted = t.entries.filter((e) => e.status === 'live' && retracted.has(e.message.id)).length
        if (beyond > 0 || liveButRetracted > 0)
          inconsistent.push(`version ${String(t.version)}: ${String(beyond)} past it, ${String(liveButRetracted)} live`)
      }
    } finally {
      stop = true
      await writer
    }
    // then every transcript was one view of the log
    expect(inconsistent).toEqual([])
  }, 60_000)
})
