/**
 * `popItem` whose commit is ambiguous, on Postgres through a TCP proxy that cuts the connection right
 * after the server committed (`ack-lost`) or instead of the commit (`commit-lost`): one call pops one
 * item, a retried call (the session's own retries, or the caller's `withRetry` around `popItem`)
 * returns the item the ambiguous attempt popped and pops nothing more, and no item is returned twice.
 *
 * Regression (adversarial review): `popItem` settled an ambiguous rewind by reading the event after the
 * version it had seen. When that read failed too, its retry popped the next older item (two items
 * gone, one returned); when the next call was the caller's retry, likewise; and when another writer
 * popped the same item in the meantime, the read found that writer's retraction and both calls
 * returned the same item. Now each pop writes a ledger record under an id minted once per call (and kept
 * for the instance's next `popItem` when the call threw), in the same transaction as its rewind: the
 * record, stored or not, says whether the ambiguous attempt committed.
 */
import { randomUUID } from 'node:crypto'
import { afterEach, describe, expect, it } from '@jest/globals'
import type { AgentInputItem } from '@openai/agents-core'
import type { SessionStore, StoredEvent } from '@turnlog/core'
import { withRetry, type PostgresStore } from '@turnlog/postgres'
import { rejection, useProxiedStores, type ProxyFault, type ProxyFaultReport, type TcpProxy } from '@turnlog/testing'
import { TURNLOG_SESSION_REASONS, TurnlogSession } from '@turnlog/openai-agents'
import { userMessage } from './support/agent-items.js'

let proxy: TcpProxy
let direct: PostgresStore
let viaProxy: PostgresStore
useProxiedStores((p) => ({ proxy, direct, viaProxy } = p))
afterEach(() => proxy.disarm())

const [q1, q2, q3, q4] = ['q1', 'q2', 'q3', 'q4'].map(userMessage) as [AgentInputItem, AgentInputItem, AgentInputItem, AgentInputItem]
const cutAnyStatement: ProxyFault = { kind: 'commit-lost', match: () => true }

/** Arms `faults` one after another: each as soon as the one before fired. */
function armChain(faults: readonly ProxyFault[]): { readonly reports: ProxyFaultReport[] } {
  const reports: ProxyFaultReport[] = []
  const next = (i: number): void => {
    const fault = faults[i]
    if (fault === undefined) return
    void proxy.arm(fault).then((report) => {
      reports.push(report)
      next(i + 1)
    })
  }
  next(0)
  return { reports }
}

/**
 * `store`, with `gate()` awaited before each of its calls (an interleaving point for another writer);
 * with `inTransactions`, before each call of the store `atomically` hands to its work too.
 */
function gated(store: SessionStore, gate: () => Promise<void>, inTransactions = false): SessionStore {
  return new Proxy(store, {
    get(target, property) {
      const value: unknown = Reflect.get(target, property) // getters run on the store itself (private fields)
      if (typeof value !== 'function') return value
      const method = value as (...args: unknown[]) => unknown
      if (property === 'events') {
        return async function* (...args: unknown[]) {
          await gate()
          yield* method.apply(target, args) as AsyncIterable<StoredEvent>
        }
      }
      if (property === 'atomically' && inTransactions) {
        return async (work: (bound: SessionStore) => Promise<unknown>) => {
          await gate()
          return method.call(target, (bound: SessionStore) => work(gated(bound, gate)))
        }
      }
      return async (...args: unknown[]) => {
        await gate()
        return method.apply(target, args)
      }
    },
  })
}

/** The `popItem` retractions of the conversation: the ids each one retracted. */
async function popRetractions(sessionId: string): Promise<string[][]> {
  const out: string[][] = []
  for await (const event of direct.events(sessionId)) {
    if (event.type === 'messages_retracted' && event.data.reason === TURNLOG_SESSION_REASONS.popItem) out.push([...event.data.ids])
  }
  return out
}

async function idsOf(sessionId: string): Promise<string[]> {
  return (await direct.load(sessionId)).messages.map((m) => m.id)
}

describe('popItem after an ambiguous commit (Postgres, through a TCP proxy)', () => {
  it.each([1, 2, 3])(
    'the ack is lost, then up to %d more commit points are cut: the retries return the popped item and pop nothing more',
    async (attempts) => {
      // given
      const session = new TurnlogSession({ store: viaProxy, sessionId: `pop-${randomUUID()}`, retry: { attempts, baseDelayMs: 1 } })
      await session.addItems([q1, q2, q3, q4])
      const [, , , last] = await idsOf(session.turnlogSessionId)
      const chain = armChain([{ kind: 'ack-lost' }, ...Array<ProxyFault>(attempts).fill(cutAnyStatement)])

      // when: the caller retries popItem as guarantees.md suggests for DB_TRANSIENT
      const popped = await withRetry(() => session.popItem(), { attempts: 10, baseDelayMs: 1 })
      proxy.disarm() // a fault of the chain that found no commit point to cut

      // then
      // (the faults after the first fire at the next commit points: the old settlement's reads; a
      // settlement that finds its record stored rolls back, and has none)
      expect(chain.reports[0]?.serverOutcome).toBe('committed')
      expect(popped).toEqual(q4)
      expect(await session.getItems()).toEqual([q1, q2, q3])
      expect(await popRetractions(session.turnlogSessionId)).toEqual([[last]])
    },
  )

  it('the transactions that settle the ambiguous pop lose their connections too: retried, the item returned once', async () => {
    // given: after the lost ack, the connection of each of the next two pop transactions is cut
    // inside the transaction, before its first statement
    let fired = false
    let cuts = 0
    const gate = async (): Promise<void> => {
      if (!fired || cuts >= 2) return
      cuts++
      proxy.cutAll()
      await new Promise((resolve) => setImmediate(resolve))
    }
    const session = new TurnlogSession({
      store: gated(viaProxy, gate, true),
      sessionId: `pop-cut-${randomUUID()}`,
      retry: { attempts: 4, baseDelayMs: 1 },
    })
    await session.addItems([q1, q2, q3, q4])
    const [, , , last] = await idsOf(session.turnlogSessionId)
    const report = proxy.arm({ kind: 'ack-lost' }).then((r) => {
      fired = true
      return r
    })

    // when
    const popped = await session.popItem()

    // then
    expect((await report).serverOutcome).toBe('committed')
    expect(cuts).toBe(2)
    expect(popped).toEqual(q4)
    expect(await session.getItems()).toEqual([q1, q2, q3])
    expect(await popRetractions(session.turnlogSessionId)).toEqual([[last]])
  })

  it('another writer pops while the ambiguous pop is unsettled: each item is returned once', async () => {
    // given: A writes through the proxy, B (another instance of the conversation) straight to the server
    const key = `pop-race-${randomUUID()}`
    let fired = false
    let other: Promise<AgentInputItem | undefined> | undefined
    const gate = async (): Promise<void> => {
      if (!fired || other !== undefined) return
      other = b.popItem() // right after A's commit was lost, before A's next call reaches the store
      await other
    }
    const a = new TurnlogSession({ store: gated(viaProxy, gate), sessionId: key, retry: { baseDelayMs: 1 } })
    const b = new TurnlogSession({ store: direct, sessionId: key })
    await a.addItems([q1, q2, q3, q4])
    await b.getSessionId()
    const [, , third, last] = await idsOf(a.turnlogSessionId)
    void proxy.arm({ kind: 'commit-lost' }).then(() => {
      fired = true
    })

    // when
    const popped = await a.popItem()

    // then
    expect(other).toBeDefined()
    expect(await other).toEqual(q4)
    expect(popped).toEqual(q3)
    expect(await b.getItems()).toEqual([q1, q2])
    expect(await popRetractions(a.turnlogSessionId)).toEqual([[last], [third]])
  })

  it('the ambiguous pop took the last item: the retry returns it (and nothing else is popped)', async () => {
    // given
    const session = new TurnlogSession({ store: viaProxy, sessionId: `pop-last-${randomUUID()}`, retry: { attempts: 1 } })
    await session.addItems([q1])
    const fired = proxy.arm({ kind: 'ack-lost' })

    // when
    const first = await rejection(session.popItem())
    const retried = await session.popItem()

    // then
    expect((await fired).serverOutcome).toBe('committed')
    expect(first).toMatchObject({ code: 'DB_TRANSIENT' })
    expect(retried).toEqual(q1)
    expect(await session.popItem()).toBeUndefined()
    expect(await popRetractions(session.turnlogSessionId)).toHaveLength(1)
  })

  it('an ambiguous pop that did not commit, and another writer emptied the history: the retry returns undefined and records nothing', async () => {
    // given
    const key = `pop-empty-${randomUUID()}`
    const a = new TurnlogSession({ store: viaProxy, sessionId: key, retry: { attempts: 1 } })
    const b = new TurnlogSession({ store: direct, sessionId: key })
    await a.addItems([q1])
    const fired = proxy.arm({ kind: 'commit-lost' })
    const first = await rejection(a.popItem())
    expect((await fired).serverOutcome).toBe('not-sent')
    expect(await b.popItem()).toEqual(q1)
    const ledgerVersion = (await direct.getSession(a.ledgerSessionId)).version

    // when
    const retried = await a.popItem()

    // then
    expect(first).toMatchObject({ code: 'DB_TRANSIENT' })
    expect(retried).toBeUndefined()
    expect(await popRetractions(a.turnlogSessionId)).toHaveLength(1)
    expect((await direct.getSession(a.ledgerSessionId)).version).toBe(ledgerVersion)
  })

  it('after many pops, a pop whose ack is lost: its record already left the ledger live list, and the retry still finds it (one item popped, returned once)', async () => {
    // given: 60 pops before, each record appended and retracted in its own pop's transaction
    const session = new TurnlogSession({ store: viaProxy, sessionId: `pop-pruned-${randomUUID()}`, retry: { attempts: 1 } })
    const items = Array.from({ length: 63 }, (_, i) => userMessage(`p${i}`))
    await session.addItems(items)
    for (let i = 0; i < 60; i++) await session.popItem()
    const [, , third] = await idsOf(session.turnlogSessionId)
    const fired = proxy.arm({ kind: 'ack-lost' })

    // when: the pop whose commit (rewind, record, record's retraction) is not acknowledged, and the caller's retry
    const first = await rejection(session.popItem())
    const afterCommit = await direct.getSession(session.ledgerSessionId)
    const retried = await session.popItem()

    // then
    expect((await fired).serverOutcome).toBe('committed')
    expect(first).toMatchObject({ code: 'DB_TRANSIENT' })
    expect(afterCommit.liveCount).toBe(0) // the committed attempt's record is retracted already
    expect(retried).toEqual(items[2])
    expect(await session.getItems()).toEqual(items.slice(0, 2))
    const pops = await popRetractions(session.turnlogSessionId)
    expect(pops).toHaveLength(61)
    expect(pops.at(-1)).toEqual([third])
    expect(await direct.getSession(session.ledgerSessionId)).toMatchObject({ version: afterCommit.version, liveCount: 0 })
  })

  it('after the ambiguous pop the caller made another call: the next popItem is a new pop', async () => {
    // given
    const session = new TurnlogSession({ store: viaProxy, sessionId: `pop-moved-on-${randomUUID()}`, retry: { attempts: 1 } })
    await session.addItems([q1, q2, q3, q4])
    const fired = proxy.arm({ kind: 'ack-lost' })
    const first = await rejection(session.popItem())
    expect((await fired).serverOutcome).toBe('committed')

    // when: the caller looks, sees q4 gone, and pops again
    const seen = await session.getItems()
    const popped = await session.popItem()

    // then
    expect(first).toMatchObject({ code: 'DB_TRANSIENT' })
    expect(seen).toEqual([q1, q2, q3])
    expect(popped).toEqual(q3)
    expect(await session.getItems()).toEqual([q1, q2])
    expect(await popRetractions(session.turnlogSessionId)).toHaveLength(2)
  })
})
