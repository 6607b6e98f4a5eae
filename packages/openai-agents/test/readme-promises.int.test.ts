/**
 * packages/openai-agents/README.md, the promises no other test of this package pins down (an audit of
 * the README, promise by promise), on Postgres and on PGlite:
 *
 * - "Read-decide-write calls are race-safe": `popItem` from several instances of one conversation at
 *   once pops each item once (no item returned twice, none retracted without being returned);
 *   `applyHistoryMutations` and `replace_suffix` racing an `addItems` never retract the item the other
 *   writer added (they read again and decide again, or refuse as stale). Past its retries (`retry.attempts`)
 *   a pop throws `VERSION_CONFLICT` having retracted nothing (the README's error table now lists it).
 * - The error table: in `applyHistoryMutations`, a replacement item the format refuses is
 *   `INVALID_MESSAGE` (as in `addItems`; the README said `INVALID_INPUT`), a replacement that is not a
 *   `function_call` `INVALID_INPUT`; neither quotes item content, and nothing is written.
 * - `sessionId`: "A UUID is used as the turnlog session id; any other string gets a derived one", and
 *   the default, a new UUIDv7, opens the same conversation again from another instance.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import type { AgentInputItem } from '@openai/agents-core'
import { isTurnlogError, sessionIdFromExternal } from '@turnlog/core'
import { TurnlogSession } from '@turnlog/openai-agents'
import { rejection } from '@turnlog/testing'
import { functionCall, functionResult, userMessage } from './support/agent-items.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'

describe.each(STORE_KINDS)('packages/openai-agents/README.md promises (%s)', (kind) => {
  const stores = useStore(kind)
  const instances = (key: string, n: number): TurnlogSession[] =>
    Array.from({ length: n }, () => new TurnlogSession({ store: stores.get(), sessionId: key }))

  it('"popItem ... when another writer moved the session in between, read again and decide again": concurrent pops pop each item once', async () => {
    const key = `pop-race-${randomUUID()}`
    const sessions = instances(key, 6)
    const items = Array.from({ length: 6 }, (_, k) => userMessage(`item ${String(k)}`))
    await sessions[0]?.addItems(items)

    const popped = await Promise.all(sessions.map((s) => s.popItem()))

    // every item returned exactly once, and the history empty: nothing retracted unreturned
    const texts = popped.map((item) => JSON.stringify(item))
    expect(new Set(texts).size).toBe(6)
    expect([...texts].sort()).toEqual(items.map((item) => JSON.stringify(item)).sort())
    expect(await sessions[1]?.getItems()).toEqual([])
    const transcript = await stores.get().transcript(sessions[0]?.turnlogSessionId ?? '')
    expect(transcript.entries.map((e) => e.status)).toEqual(Array(6).fill('retracted'))
  })

  it('popItem past its retries: VERSION_CONFLICT, nothing retracted for it; every item returned is gone, every other stays', async () => {
    const key = `pop-storm-${randomUUID()}`
    const sessions = Array.from(
      { length: 12 },
      () => new TurnlogSession({ store: stores.get(), sessionId: key, retry: { attempts: 2, baseDelayMs: 1 } }),
    )
    const items = Array.from({ length: 12 }, (_, k) => userMessage(`item ${String(k)}`))
    await sessions[0]?.addItems(items)

    const settled = await Promise.allSettled(sessions.map((s) => s.popItem()))

    const popped = settled.flatMap((r) => (r.status === 'fulfilled' ? [JSON.stringify(r.value)] : []))
    const failed = settled.flatMap((r) => (r.status === 'rejected' ? [r.reason as unknown] : []))
    for (const error of failed) expect(error).toMatchObject({ code: 'VERSION_CONFLICT' })
    expect(new Set(popped).size).toBe(popped.length)
    const left = (await sessions[0]?.getItems())?.map((item) => JSON.stringify(item)) ?? []
    expect([...left, ...popped].sort()).toEqual(items.map((item) => JSON.stringify(item)).sort())
    expect(left).toEqual(items.slice(0, left.length).map((item) => JSON.stringify(item)))
  })

  it('applyHistoryMutations racing addItems never retracts the added items', async () => {
    for (let round = 0; round < 5; round++) {
      const key = `mutate-race-${randomUUID()}`
      const [writer, rewriter] = instances(key, 2)
      if (writer === undefined || rewriter === undefined) throw new Error('two instances')
      await writer.addItems([userMessage('q'), functionCall('call-1', '{"a":1}'), functionResult('call-1', 'one')])
      const added = [userMessage(`after ${String(round)}`)]
      const replacement = functionCall('call-1', '{"a":2}')

      await Promise.all([
        writer.addItems(added),
        rewriter.applyHistoryMutations({
          mutations: [{ type: 'replace_function_call', callId: 'call-1', replacement: replacement as never }],
        }),
      ])

      expect(await writer.getItems()).toEqual([userMessage('q'), replacement, functionResult('call-1', 'one'), ...added])
    }
  })

  it('replace_suffix racing addItems either applies before the append or refuses as stale: the added item stays', async () => {
    const outcomes = new Set<string>()
    for (let round = 0; round < 6; round++) {
      const key = `suffix-race-${randomUUID()}`
      const [writer, replacer] = instances(key, 2)
      if (writer === undefined || replacer === undefined) throw new Error('two instances')
      await writer.addItems([userMessage('a'), userMessage('b')])
      const added = userMessage(`c ${String(round)}`)
      const transaction = { type: 'replace_suffix' as const, expectedSuffix: [userMessage('b')], replacement: [userMessage('B')] }

      const [, replaced] = await Promise.allSettled([
        writer.addItems([added]),
        replacer.applyHistoryTransaction({ operationId: `op-${String(round)}`, transaction } as never),
      ])

      const items = await writer.getItems()
      if (replaced.status === 'fulfilled') {
        outcomes.add('applied')
        expect(items).toEqual([userMessage('a'), userMessage('B'), added])
      } else {
        outcomes.add('stale')
        expect(replaced.reason).toMatchObject({ code: 'VERSION_CONFLICT', details: { reason: 'stale_suffix' } })
        expect(items).toEqual([userMessage('a'), userMessage('b'), added])
      }
    }
    expect(outcomes.size).toBeGreaterThan(0)
  })

  it('applyHistoryMutations: an invalid replacement item is INVALID_MESSAGE, a replacement of another type INVALID_INPUT; neither quotes content nor writes', async () => {
    const [session] = instances(`mutate-invalid-${randomUUID()}`, 1)
    if (session === undefined) throw new Error('one instance')
    await session.addItems([functionCall('call-9', '{"secret":"s3cr3t"}')])
    const version = (await stores.get().getSession(session.turnlogSessionId)).version
    const bad = { type: 'function_call', callId: 'call-9', name: 'lookup', arguments: 42, note: 's3cr3t' } as unknown as AgentInputItem

    const error = await rejection(
      session.applyHistoryMutations({ mutations: [{ type: 'replace_function_call', callId: 'call-9', replacement: bad as never }] }),
    )

    expect(isTurnlogError(error, 'INVALID_MESSAGE')).toBe(true)
    expect(JSON.stringify(error) + String((error as Error).message)).not.toContain('s3cr3t')
    const other = await rejection(
      session.applyHistoryMutations({
        mutations: [{ type: 'replace_function_call', callId: 'call-9', replacement: userMessage('s3cr3t') as never }],
      }),
    )
    expect(isTurnlogError(other, 'INVALID_INPUT')).toBe(true)
    expect(JSON.stringify(other) + String((other as Error).message)).not.toContain('s3cr3t')
    expect((await stores.get().getSession(session.turnlogSessionId)).version).toBe(version)
  })

  it('sessionId: a UUID is the turnlog session id, another string a derived one, the default a UUIDv7 that reopens the conversation', async () => {
    const store = stores.get()
    const uuid = randomUUID()
    expect(new TurnlogSession({ store, sessionId: uuid }).turnlogSessionId).toBe(uuid)
    expect(new TurnlogSession({ store, sessionId: 'user-42' }).turnlogSessionId).toBe(sessionIdFromExternal('openai-agents:user-42'))

    const fresh = new TurnlogSession({ store })
    const key = await fresh.getSessionId()
    expect(key).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    await fresh.addItems([userMessage('remember me')])
    expect(await new TurnlogSession({ store, sessionId: key }).getItems()).toEqual([userMessage('remember me')])
  })
})
