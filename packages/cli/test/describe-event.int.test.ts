import { describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStoreOfKind } from '@turnlog/testing'
import { describeEvent } from '../src/describe-event.js'

let store: PostgresStore
useTestStoreOfKind('pglite', (t) => ({ store } = t))

describe('describeEvent', () => {
  it('says which retractions and compactions a sync wrote, and which a rewind or compact wrote (PGlite)', async () => {
    // given: one session changed by sync (a summary in place of two messages, one dropped), one by rewind and compact
    const [synced, direct] = [await store.createSession(), await store.createSession()]
    const m = (content: string): ReturnType<typeof createMessage> => createMessage({ role: 'user', content })
    const [a, b, c, d] = [m('a'), m('b'), m('c'), m('d')]
    await store.append(synced, [a, b, c, d])
    const summary = createMessage({ role: 'system', content: 'summary of a and b' })
    await store.sync(synced, [summary, c], { compaction: { summaryIds: [summary.id] } })
    const [e, f, g] = [m('e'), m('f'), m('g')]
    await store.append(direct, [e, f, g])
    await store.rewind(direct, { from: g.id })
    await store.compact(direct, { covered: [e.id], summary: createMessage({ role: 'system', content: 'summary of e' }) })

    // when
    const lines = async (sid: string): Promise<string[]> => {
      const out: string[] = []
      for await (const ev of store.events(sid))
        if (ev.type === 'messages_retracted' || ev.type === 'messages_compacted') out.push(describeEvent(ev))
      return out
    }

    // then
    expect(await lines(synced)).toEqual([
      expect.stringMatching(/^sync: retracted 1 message\(s\) \[…\w{8}\] missing from the caller's list$/),
      expect.stringMatching(/^sync compaction: 2 message\(s\) \[…\w{8}, …\w{8}\] replaced by summary \[…\w{8}\]$/),
    ])
    expect(await lines(direct)).toEqual([
      expect.stringMatching(/^rewind: retracted 1 message\(s\)/),
      expect.stringMatching(/^compaction: 1 message\(s\)/),
    ])
  }, 60_000)
})
