/**
 * docs/errors.md (`INVALID_INPUT`): a key that is not one of the config's is refused at construction,
 * naming it. Before, `new TurnlogSession({ store, sesionId: 'user-42' })` opened a new conversation under
 * a minted id (the user's history was never read), `{ tenantID }` created its sessions under no tenant,
 * and a misspelt `retry` option (`{ atempts: 1 }`) was refused only by the first call that retried
 * through `withRetry`, never by the history writes that retry on their own.
 */
import { describe, expect, it } from '@jest/globals'
import type { PostgresStore } from '@turnlog/postgres'
import { refusal, useTestStore } from '@turnlog/testing'
import { TurnlogSession } from '@turnlog/openai-agents'
import { userMessage } from './support/agent-items.js'

let store: PostgresStore
useTestStore((t) => ({ store } = t))

type Row = readonly [name: string, config: unknown, field: string, suggestion: string | undefined]

describe('new TurnlogSession refuses a key that is not one of its config, at once', () => {
  it('names the key (in retry too) and writes nothing', async () => {
    // given configs that are valid but for one key
    const rows: Row[] = [
      ['sessionId', { store, sesionId: 'user-42' }, 'config.sesionId', 'sessionId'],
      ['tenantId', { store, tenantID: 'acme' }, 'config.tenantID', 'tenantId'],
      ['retry', { store, retyr: { attempts: 1 } }, 'config.retyr', 'retry'],
      ['no option near', { store, model: 'gpt' }, 'config.model', undefined],
      ['retry.attempts', { store, retry: { atempts: 1 } }, 'config.retry.atempts', 'attempts'],
      ['retry.onRetry', { store, retry: { onRetyr: () => undefined } }, 'config.retry.onRetyr', 'onRetry'],
    ]

    // when each is constructed
    const outcomes: unknown[] = []
    for (const [name, config] of rows) outcomes.push([name, await refusal(() => new TurnlogSession(config as never))])

    // then each throws INVALID_INPUT naming its key, and no session was created
    expect(outcomes).toEqual(rows.map(([name, , field, suggestion]) => [name, { code: 'INVALID_INPUT', field, suggestion }]))
    expect((await store.sessions()).sessions).toEqual([])

    // while the keys spelt right (and a key given undefined) make a working session
    const session = new TurnlogSession({ store, sessionId: 'user-42', retry: { attempts: 2 }, tenantID: undefined } as never)
    await session.addItems([userMessage('hi')])
    expect(await session.getItems()).toHaveLength(1)
  })

  it('refuses a retry value withRetry would refuse, at construction rather than at the first retry', async () => {
    // given retry policies with one bad value each: 'three' attempts would have retried a lost race forever
    // (the history writes' loop compared attempt >= 'three': never true), a negative delay, a non-function observer
    const rows: Row[] = [
      ['attempts not a number', { store, retry: { attempts: 'three' } }, 'config.retry.attempts', undefined],
      ['attempts zero', { store, retry: { attempts: 0 } }, 'config.retry.attempts', undefined],
      ['attempts fractional', { store, retry: { attempts: 1.5 } }, 'config.retry.attempts', undefined],
      ['baseDelayMs negative', { store, retry: { baseDelayMs: -1 } }, 'config.retry.baseDelayMs', undefined],
      ['maxDelayMs infinite', { store, retry: { maxDelayMs: Infinity } }, 'config.retry.maxDelayMs', undefined],
      ['onRetry not a function', { store, retry: { onRetry: 'log' } }, 'config.retry.onRetry', undefined],
    ]
    const sessionsBefore = (await store.sessions()).sessions.length

    // when each is constructed
    const outcomes: unknown[] = []
    for (const [name, config] of rows) outcomes.push([name, await refusal(() => new TurnlogSession(config as never))])

    // then each throws INVALID_INPUT naming the value, and no session was created
    expect(outcomes).toEqual(rows.map(([name, , field, suggestion]) => [name, { code: 'INVALID_INPUT', field, suggestion }]))
    expect((await store.sessions()).sessions).toHaveLength(sessionsBefore)
  })
})
