/* exported renderEventCard */
/** The card of one non-message event on the timeline (and the mark of its `row`): what it did, what it covers, its findings. */
function renderEventCard(
  dom: PageDom,
  item: InspectEventItem,
  row: HTMLElement,
  lane: TimelineLane | undefined,
  index: InspectModelIndex,
  links: PageLinks,
): HTMLElement {
  const { el, add, appendVisible } = dom
  const { findingsBySeq, seqLabel } = index
  const { idChip } = links
  row.classList.add('evrow')
  const card = el('article', `card event ev-${item.type}`)
  card.setAttribute('data-seq', String(item.seq))
  card.setAttribute('data-event', item.type)
  card.setAttribute('data-ids', item.ids.join(' '))
  const icon =
    item.type === 'messages_retracted'
      ? '⟲'
      : item.type === 'messages_compacted'
        ? '▣'
        : item.type === 'session_forked'
          ? '⑂'
          : item.type === 'message_finalized'
            ? '✓'
            : '✎'
  const head = el('div', 'head')
  add(head, el('span', 'icon', icon), el('b', undefined, seqLabel(item.seq)))
  const t = el('span', 'evtext')
  appendVisible(t, item.text)
  head.appendChild(t)
  head.appendChild(el('time', 'when', item.recordedAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')))
  card.appendChild(head)
  if (lane !== undefined) {
    card.style.setProperty('--c', lane.color)
    const covers = el('div', 'covers')
    covers.setAttribute('data-span', lane.span.type)
    covers.setAttribute('data-covers', lane.span.ids.join(' '))
    covers.appendChild(
      el('span', 'label', lane.span.type === 'rewind' ? `retracts ${lane.span.ids.length}:` : `replaces ${lane.span.ids.length}:`),
    )
    for (const id of lane.span.ids) covers.appendChild(idChip(id))
    if (lane.span.summary.length > 0) {
      covers.appendChild(el('span', 'label', ' with summary'))
      for (const id of lane.span.summary) covers.appendChild(idChip(id))
    }
    card.appendChild(covers)
  }
  const found = findingsBySeq.get(item.seq) ?? []
  for (const f of found) {
    const b = el('span', `fbadge sev-${f.severity}`, `${f.severity}: ${f.kind}`)
    b.title = f.explanation
    head.appendChild(b)
  }
  return card
}
