/**
 * docs/errors.md (`INVALID_INPUT`): "`details.field` names the argument or option at fault wherever one
 * does". A new user's repro on the embedded store printed `INVALID_INPUT {}` for
 * `store.compact(s, { covered: [], summary })`, `store.rewind(s, { after: a.id, from: a.id })` and
 * `store.fork(s, { at: a.id, id: s })`: many checks of the store's calls threw with no `details.field`.
 * Each row below is one call with one argument or option at fault, everything else valid; it must be
 * refused with that code naming exactly that argument, and nothing is written. On Postgres and PGlite.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type Message, type SessionId } from '@turnlog/core'
import { START_CHECKPOINT, compareCheckpoints, rolesSql, type PostgresStore } from '@turnlog/postgres'
import { STORE_KINDS, caught, useTestStoreOfKind } from '@turnlog/testing'

/** Code and `details.field` of what `call` threw (`'settled'` when it did not). */
async function refusal(call: () => unknown): Promise<unknown> {
  const error = await caught(call)
  if (error === undefined) return 'settled'
  return isTurnlogError(error) ? { code: error.code, field: error.details['field'] } : String(error)
}

const user = (content: string): Message => createMessage({ role: 'user', content })
const noop = async (): Promise<void> => {}

describe('rolesSql and compareCheckpoints name the argument at fault', () => {
  it.each<[string, () => unknown, string]>([
    ['rolesSql(null)', () => rolesSql(null as never), 'options'],
    ['rolesSql({ migrator: "" })', () => rolesSql({ migrator: '' }), 'options.migrator'],
    // 32 characters, 64 bytes: Postgres would cut it to 63 bytes, another role's name
    ['rolesSql({ migrator: 64+ UTF-8 bytes })', () => rolesSql({ migrator: 'ü'.repeat(32) }), 'options.migrator'],
    ['compareCheckpoints(bad txId)', () => compareCheckpoints({ txId: 'x', globalPosition: 0 }, START_CHECKPOINT), 'a.txId'],
    ['compareCheckpoints(bad position)', () => compareCheckpoints(START_CHECKPOINT, { txId: '1', globalPosition: -1 }), 'b.globalPosition'],
  ])('%s', async (_name, call, field) => {
    // when / then
    expect(await refusal(call)).toEqual({ code: 'INVALID_INPUT', field })
  })
})

describe.each(STORE_KINDS)('every INVALID_INPUT of a store call names its argument (%s)', (kind) => {
  let store: PostgresStore
  useTestStoreOfKind(kind, (t) => ({ store } = t))

  it('in the reported repro and every other check of the store calls', async () => {
    // given a session holding a final message `a` and a partial one `p`
    const session: SessionId = await store.createSession()
    const a = user('a')
    const p = createMessage({ role: 'assistant', content: 'p…' }, { status: 'partial' })
    await store.append(session, [a, p])
    await store.finalize(session, p.id)
    const summary = createMessage({ role: 'system', content: 'summary' })
    const before = await store.getSession(session)
    const rows: [string, () => unknown, string, string?][] = [
      // the repro
      ['compact: covered empty', () => store.compact(session, { covered: [], summary }), 'covered'],
      ['rewind: after and from', () => store.rewind(session, { after: a.id, from: a.id } as never), 'target'],
      ['fork onto the parent id', () => store.fork(session, { at: a.id, id: session }), 'options.id'],
      // compact
      ['compact: input null', () => store.compact(session, null as never), 'input'],
      ['compact: covered names a message twice', () => store.compact(session, { covered: [a.id, a.id], summary }), 'covered[1]'],
      ['compact: summary empty', () => store.compact(session, { covered: [a.id], summary: [] }), 'summary'],
      ['compact: the summary is covered', () => store.compact(session, { covered: [a.id], summary: a }), 'summary'],
      ['compact: a summary message is covered', () => store.compact(session, { covered: [a.id], summary: [summary, a] }), 'summary[1]'],
      [
        'compact: expectedVersion',
        () => store.compact(session, { covered: [a.id], summary, expectedVersion: -1 }),
        'input.expectedVersion',
      ],
      // history
      ['rewind: target null', () => store.rewind(session, null as never), 'target'],
      ['rewind: target empty', () => store.rewind(session, {} as never), 'target'],
      ['rewind: expectedVersion', () => store.rewind(session, { after: a.id }, { expectedVersion: 1.5 }), 'options.expectedVersion'],
      ['revise: status', () => store.revise(session, a.id, { role: 'user', content: 'b' }, { status: 'done' as never }), 'options.status'],
      ['revise: a final message back to partial', () => store.revise(session, p.id, p.payload, { status: 'partial' }), 'options.status'],
      // sessions
      ['fork: options null', () => store.fork(session, null as never), 'options'],
      ['fork: another tenant', () => store.fork(session, { at: a.id, tenantId: 'other' }), 'options.tenantId'],
      // append, sync
      ['append: expectedVersion', () => store.append(session, [user('x')], { expectedVersion: -1 }), 'options.expectedVersion'],
      [
        'append: an ephemeral message',
        () => store.append(session, [user('x'), createMessage({ role: 'user', content: 'e' }, { ephemeral: true })]),
        'messages[1]',
        'INVALID_MESSAGE',
      ],
      // a malformed field of a message copy, named where the caller put it
      [
        'append: a copy whose id is not a UUID',
        () => store.append(session, [user('x'), { ...user('y'), id: 'nope' as never }]),
        'messages[1].id',
      ],
      [
        'append: a copy with an unknown status',
        () => store.append(session, [{ ...user('y'), status: 'final' as never }]),
        'messages[0].status',
        'INVALID_MESSAGE',
      ],
      [
        'flush: a copy whose createdAt is no date',
        () => store.flush(session, [a, p, { ...user('y'), createdAt: '2024-02-30T00:00:00Z' }]),
        'live[2].createdAt',
        'INVALID_MESSAGE',
      ],
      [
        'compact: a summary that is not an object',
        () => store.compact(session, { covered: [a.id], summary: [summary, 5 as never] }),
        'summary[1]',
        'INVALID_MESSAGE',
      ],
      [
        'sync: a summary id not listed',
        () => store.sync(session, [a, p], { compaction: { summaryIds: [summary.id] } }),
        'compaction.summaryIds',
      ],
      [
        'sync: a malformed summary id',
        () => store.sync(session, [a, p], { compaction: { summaryIds: [a.id, 'x'] } }),
        'compaction.summaryIds[1]',
      ],
      // reads
      ['sessions: limit', () => store.sessions({ limit: 0 }), 'options.limit'],
      ['events: fromSeq', async () => { for await (const e of store.events(session, { fromSeq: 1.5 })) void e }, 'options.fromSeq'], // prettier-ignore
      ['events: toSeq', async () => { for await (const e of store.events(session, { toSeq: Number.NaN })) void e }, 'options.toSeq'], // prettier-ignore
      ['state: at negative', () => store.state(session, { at: -1 }), 'options.at'],
      ['state: at past the version', () => store.state(session, { at: 1000 }), 'options.at'],
      // admin
      ['rebuild: verify', () => store.rebuild({ verify: 'yes' as never }), 'options.verify'],
      ['rebuild: onProgress', () => store.rebuild({ onProgress: 1 as never }), 'options.onProgress'],
      ['oldestOpenTransaction: scope', () => store.oldestOpenTransaction({ scope: 'host' as never }), 'options.scope'],
      ['redact: options null', () => store.redact(session, a.id, null as never), 'options'],
      ['withTransaction: not a transaction', () => store.withTransaction(null as never), 'trx'],
      // subscribe (refused before it starts)
      ['subscribe: config null', () => store.subscribe(null as never, noop), 'config'],
      ['subscribe: empty name', () => store.subscribe({ name: '' }, noop), 'config.name'],
      ['subscribe: from', () => store.subscribe({ name: 'n', from: { txId: 'x', globalPosition: 0 } }, noop), 'config.from.txId'],
      ['subscribe: filter', () => store.subscribe({ name: 'n', filter: 5 as never }, noop), 'filter'],
      ['subscribe: filter.types empty', () => store.subscribe({ name: 'n', filter: { types: [] as never } }, noop), 'filter.types'],
      ['subscribe: filter.types unknown', () => store.subscribe({ name: 'n', filter: { types: ['nope'] as never } }, noop), 'filter.types'],
      ['subscribe: handler', () => store.subscribe({ name: 'n' }, null as never), 'handler'],
      ['subscribe: options null', () => store.subscribe({ name: 'n' }, noop, null as never), 'options'],
      ['subscribe: batchSize', () => store.subscribe({ name: 'n' }, noop, { batchSize: 0 }), 'options.batchSize'],
      ['subscribe: listen', () => store.subscribe({ name: 'n' }, noop, { listen: 'yes' as never }), 'options.listen'],
      ['subscribe: onError', () => store.subscribe({ name: 'n' }, noop, { onError: 1 as never }), 'options.onError'],
      ['subscribe: backoff', () => store.subscribe({ name: 'n' }, noop, { backoff: 5 as never }), 'options.backoff'],
      [
        'subscribe: backoff.initialDelayMs',
        () => store.subscribe({ name: 'n' }, noop, { backoff: { initialDelayMs: 0 } }),
        'options.backoff.initialDelayMs',
      ],
      ['subscribe: backoff.factor', () => store.subscribe({ name: 'n' }, noop, { backoff: { factor: 0.5 } }), 'options.backoff.factor'],
    ]
    // when
    const got: unknown[] = []
    for (const [name, call] of rows) got.push({ name, refusal: await refusal(call) })

    // then (every row at once: a failure lists each call whose field is wrong)
    expect(got).toEqual(rows.map(([name, , field, code = 'INVALID_INPUT']) => ({ name, refusal: { code, field } })))
    // nothing written by any of them
    expect((await store.getSession(session)).version).toBe(before.version)
    expect((await store.sessions()).sessions).toHaveLength(1)
  })
})
