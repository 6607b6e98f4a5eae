/* exported renderTimeline */
/** Fills `timeline` with one row per item of the model: the bracket lanes, the seq and the item's card. */
function renderTimeline(dom: PageDom, model: InspectModel, timeline: HTMLElement, index: InspectModelIndex, links: PageLinks): void {
  const { el } = dom
  const items = model.items
  const { lanes, laneCount, spanOfEvent } = timelineLanes(model)
  timeline.setAttribute('data-show', 'all')
  timeline.style.setProperty('--lanes', String(laneCount))
  items.forEach((item, i) => {
    const row = el('div', 'row')
    for (let l = 0; l < laneCount; l++) {
      const cell = el('div', 'lane')
      const span = lanes.find((x) => x.lane === l && i >= x.start && i <= x.end)
      if (span !== undefined) {
        cell.classList.add('in')
        if (i === span.start) cell.classList.add('start')
        if (i === span.end) cell.classList.add('end')
        if (span.members.has(i)) cell.classList.add('member')
        cell.style.setProperty('--c', span.color)
        cell.title = `${span.span.type} #${span.span.seq}`
      }
      row.appendChild(cell)
    }
    const seqCell = el('div', 'seq', `#${item.seq}`)
    row.appendChild(seqCell)
    const card =
      item.kind === 'message'
        ? renderMessageCard(dom, item, row, index, links)
        : renderEventCard(dom, item, row, spanOfEvent.get(item.seq), index, links)
    links.rowFor.set(`s:${item.seq}`, row)
    row.appendChild(card)
    timeline.appendChild(row)
  })
  if (items.length === 0) timeline.appendChild(el('p', 'empty', 'This session has no events yet.'))
}
