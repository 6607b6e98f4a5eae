/**
 * `replaceHistoryWithCompaction` mirrors the SDK's own compaction: the history afterwards is exactly
 * the items it was given, also when they keep a function result whose call they dropped (`compact`
 * refuses such a split from a live writer; the adapter records what the SDK already did, with
 * `allowSplitToolPairs`, and `load().pairing` reports the orphan). A retained call re-added as a summary
 * item next to its kept result splits nothing. On Postgres and on PGlite.
 */
import { randomUUID } from 'node:crypto'
import { describe, expect, it } from '@jest/globals'
import { TurnlogSession } from '@turnlog/openai-agents'
import { assistantMessage, compactionItem, functionCall, functionResult, userMessage } from './support/agent-items.js'
import { STORE_KINDS, useStore } from './support/open-test-store.js'

describe.each(STORE_KINDS)('replaceHistoryWithCompaction and tool pairs (%s)', (kind) => {
  const stores = useStore(kind)

  it('keeps a function result whose call the SDK compacted away: mirrored as given, the orphan reported', async () => {
    // given a history with a call and its result
    const session = new TurnlogSession({ store: stores.get(), sessionId: `session-${randomUUID()}` })
    await session.addItems([userMessage('q1'), functionCall('c1', '{}'), functionResult('c1', 'r'), assistantMessage('a1')])
    const replacement = [compactionItem('enc'), functionResult('c1', 'r'), assistantMessage('a1')]

    // when
    await session.replaceHistoryWithCompaction(replacement)

    // then
    expect(await session.getItems()).toEqual(replacement)
    const loaded = await stores.get().load(session.turnlogSessionId)
    expect(loaded.pairing.orphans.map((o) => o.toolCallId)).toEqual(['c1'])
  })

  it('a whole history retained (its first item, a call, re-added as a summary item) splits nothing', async () => {
    // given
    const session = new TurnlogSession({ store: stores.get(), sessionId: `session-${randomUUID()}` })
    await session.addItems([functionCall('c2', '{}'), functionResult('c2', 'r')])
    const replacement = [compactionItem('enc'), functionCall('c2', '{}'), functionResult('c2', 'r')]

    // when
    await session.replaceHistoryWithCompaction(replacement)

    // then
    expect(await session.getItems()).toEqual(replacement)
    expect((await stores.get().load(session.turnlogSessionId)).pairing.ok).toBe(true)
  })
})
