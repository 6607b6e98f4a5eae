/* exported renderLineage */
/** The fork lineage: the ancestors, this session and its forks (null when it has none of them). */
function renderLineage(dom: PageDom, model: InspectModel, links: PageLinks): HTMLElement | null {
  const { el, add, short } = dom
  const { idChip } = links
  if (model.lineage.ancestors.length === 0 && model.lineage.children.length === 0 && model.lineage.childrenComplete) return null
  const lin = el('section', 'lineage')
  lin.setAttribute('data-lineage', '')
  lin.appendChild(el('h2', undefined, 'Fork lineage'))
  const chain = el('div', 'chain')
  for (const a of [...model.lineage.ancestors].reverse()) {
    const node = el('span', 'node ancestor')
    node.setAttribute('data-ancestor', a.sessionId)
    add(node, el('code', undefined, a.sessionId), el('small', undefined, ` at ${short(a.at)}, v${a.version}`))
    add(chain, node, el('span', 'arrow', '⟶'))
  }
  add(chain, add(el('span', 'node self'), el('code', undefined, model.session.id), el('small', undefined, ' this session')))
  lin.appendChild(chain)
  if (model.lineage.children.length > 0) {
    const kids = el('div', 'children')
    kids.appendChild(el('span', 'label', 'forks of this session:'))
    for (const c of model.lineage.children) {
      const node = el('span', 'node child')
      node.setAttribute('data-child', c.sessionId)
      add(
        node,
        el('code', undefined, c.sessionId),
        el('small', undefined, ' from '),
        idChip(c.at),
        el('small', undefined, ` v${c.version}`),
      )
      kids.appendChild(node)
    }
    lin.appendChild(kids)
  }
  if (!model.lineage.childrenComplete) {
    lin.appendChild(el('p', 'note', 'Forks were searched for among the first 20,000 sessions of the store only.'))
  }
  return lin
}
