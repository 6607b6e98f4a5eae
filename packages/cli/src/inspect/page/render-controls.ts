/* exported renderControls */
/** The timeline's filters (they set its `data-show`) and the legend of the statuses. */
function renderControls(dom: PageDom, timeline: HTMLElement): HTMLElement {
  const { el, add } = dom
  const controls = el('div', 'controls')
  const filters: [string, string][] = [
    ['all', 'full history'],
    ['live', 'live list only'],
    ['changes', 'hide superseded versions'],
  ]
  const buttons: HTMLElement[] = []
  for (const [key, label] of filters) {
    const b = el('button', key === 'all' ? 'filter on' : 'filter', label)
    b.setAttribute('type', 'button')
    b.setAttribute('data-filter', key)
    b.addEventListener('click', () => {
      for (const o of buttons) o.classList.remove('on')
      b.classList.add('on')
      timeline.setAttribute('data-show', key)
    })
    buttons.push(b)
    controls.appendChild(b)
  }
  const legend = el('div', 'legend')
  for (const [status, label] of [
    ['live', 'live'],
    ['partial', 'partial (streaming)'],
    ['superseded-revision', 'superseded revision'],
    ['retracted', 'retracted (rewind)'],
    ['compacted', 'compacted'],
    ['pending', 'pending'],
  ]) {
    add(legend, add(el('span', 'lg'), el('i', `dot st-${status ?? ''}`), el('span', undefined, label ?? '')))
  }
  controls.appendChild(legend)
  return controls
}
