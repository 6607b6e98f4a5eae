/**
 * `planCompaction`: how `replaceHistoryWithCompaction(items)` becomes one turnlog compaction. The
 * property: applying the plan the way turnlog applies a compaction (covered out, summary in the first
 * covered message's place) gives exactly `items`, and the retained suffix keeps its messages.
 */
import { describe, expect, it } from '@jest/globals'
import fc from 'fast-check'
import type { OpenAIAgentsItem } from '@turnlog/core'
import { planCompaction, type LiveItem } from '@turnlog/openai-agents'

const item = (text: string): OpenAIAgentsItem => ({ role: 'user', content: text }) as OpenAIAgentsItem
const live = (...texts: string[]): LiveItem[] => texts.map((text, i) => ({ id: `m${i}`, payload: item(text) }))

/** The live list after the plan, as turnlog computes it; summary messages get ids `new…`. */
function apply(history: readonly LiveItem[], items: readonly OpenAIAgentsItem[]): LiveItem[] {
  const plan = planCompaction(history, items)
  switch (plan.kind) {
    case 'unchanged':
      return [...history]
    case 'retract_all':
      return []
    case 'append':
      return plan.items.map((payload, i) => ({ id: `new${i}`, payload }))
    case 'compact': {
      const covered = new Set(plan.covered)
      const at = history.findIndex((m) => covered.has(m.id))
      const summary = plan.summary.map((payload, i) => ({ id: `new${i}`, payload }))
      const kept = history.filter((m) => !covered.has(m.id))
      return [...kept.slice(0, at), ...summary, ...kept.slice(at)]
    }
  }
}

describe('planCompaction', () => {
  it('covers the history before the retained suffix; the marker is the summary', () => {
    expect(planCompaction(live('q1', 'a1', 'q2', 'a2'), [item('C'), item('q2'), item('a2')])).toEqual({
      kind: 'compact',
      covered: ['m0', 'm1'],
      summary: [item('C')],
    })
  })

  it('covers at least one message: a history retained whole gives up its first id', () => {
    expect(planCompaction(live('q1', 'a1'), [item('C'), item('q1'), item('a1')])).toEqual({
      kind: 'compact',
      covered: ['m0'],
      summary: [item('C'), item('q1')],
    })
  })

  it('is unchanged, an append or a retraction at the edges', () => {
    expect(planCompaction(live('C', 'q'), [item('C'), item('q')])).toEqual({ kind: 'unchanged' })
    expect(planCompaction([], [item('C')])).toEqual({ kind: 'append', items: [item('C')] })
    expect(planCompaction(live('q'), [])).toEqual({ kind: 'retract_all' })
    expect(planCompaction([], [])).toEqual({ kind: 'unchanged' })
  })

  it('property: the resulting live list is exactly the items; a retained suffix keeps its ids', () => {
    const textArb = fc.constantFrom('a', 'b', 'c')
    fc.assert(
      fc.property(fc.array(textArb, { maxLength: 6 }), fc.array(textArb, { maxLength: 6 }), (historyTexts, itemTexts) => {
        const history = live(...historyTexts)
        const items = itemTexts.map(item)
        const after = apply(history, items)
        expect(after.map((m) => m.payload)).toEqual(items)
        const keptIds = after.filter((m) => m.id.startsWith('m')).map((m) => m.id)
        // kept messages are a suffix of the history, in order
        expect(keptIds).toEqual(history.slice(history.length - keptIds.length).map((m) => m.id))
      }),
      { numRuns: 500 },
    )
  })
})
