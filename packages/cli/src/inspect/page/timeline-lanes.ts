/* exported timelineLanes */
/** The bracket of one rewind or compaction: rows `start` to `end` (indexes of the model's items). */
interface TimelineLane {
  span: InspectSpan
  start: number
  end: number
  /** The rows of the messages it covers. */
  members: Set<number>
  color: string
  /** The column it is drawn in. */
  lane: number
}

/** The timeline's brackets: one lane per rewind / compaction, from its first covered message to its event. */
function timelineLanes(model: InspectModel): {
  lanes: readonly TimelineLane[]
  laneCount: number
  spanOfEvent: ReadonlyMap<number, TimelineLane>
} {
  const PALETTE = ['#7c3aed', '#db2777', '#0891b2', '#ca8a04', '#16a34a', '#ea580c', '#4f46e5']
  const items = model.items
  const rowIndex = new Map<number, number>()
  items.forEach((item, i) => rowIndex.set(item.seq, i))
  const lanes: TimelineLane[] = []
  const laneEnds: number[] = []
  model.spans.forEach((span, k) => {
    const members = new Set<number>()
    const ids = new Set(span.ids)
    items.forEach((item, i) => {
      if (item.kind === 'message' && ids.has(item.id) && item.seq < span.seq) members.add(i)
    })
    const end = rowIndex.get(span.seq) ?? items.length - 1
    const start = members.size === 0 ? end : Math.min(...members)
    let lane = laneEnds.findIndex((e) => e < start)
    if (lane < 0) {
      lane = laneEnds.length
      laneEnds.push(end)
    } else laneEnds[lane] = end
    lanes.push({ span, start, end, members, color: PALETTE[k % PALETTE.length] ?? '#7c3aed', lane })
  })
  const laneCount = laneEnds.length
  const spanOfEvent = new Map<number, TimelineLane>(lanes.map((l) => [l.span.seq, l]))
  return { lanes, laneCount, spanOfEvent }
}
