/* exported renderHeader */
/** The page's header: the session's title and id, its counts, and the audit badge. */
function renderHeader(dom: PageDom, model: InspectModel, index: InspectModelIndex): HTMLElement {
  const { doc, el, add, appendVisible } = dom
  const { messages } = index
  const header = el('header', 'top')
  const meta = model.session.metadata
  const title =
    meta !== null && typeof meta === 'object' && !Array.isArray(meta) && typeof (meta as Record<string, unknown>)['title'] === 'string'
      ? String((meta as Record<string, unknown>)['title'])
      : 'session'
  const h1 = el('h1')
  appendVisible(h1, title)
  const sid = el('code', 'sid', model.session.id)
  add(header, add(el('div', 'brand'), el('span', 'logo', 'turnlog'), el('span', 'sep', '/'), el('span', 'what', 'inspect')), h1, sid)
  const facts = el('div', 'facts')
  const fact = (label: string, value: string): void => {
    add(facts, add(el('span', 'fact'), el('b', undefined, value), el('span', undefined, ` ${label}`)))
  }
  const count = (status: string): number => messages.filter((m) => m.status === status).length
  fact('version', String(model.session.version))
  fact('live', String(model.live.length))
  fact('messages', String(new Set(messages.map((m) => m.id)).size))
  fact('retracted', String(count('retracted')))
  fact('compacted', String(count('compacted')))
  fact('superseded versions', String(count('superseded-revision')))
  fact('partial', String(count('partial')))
  if (model.session.tenantId !== null) fact('tenant', model.session.tenantId)
  header.appendChild(facts)
  const sev = model.auditCounts?.bySeverity
  const serious = sev === undefined ? 0 : sev.critical + sev.error + sev.warning
  const auditBadge = el('div', `auditbadge ${model.findings.length === 0 ? 'clean' : serious === 0 ? 'info' : 'dirty'}`)
  auditBadge.setAttribute('data-audit', model.findings.length === 0 ? 'clean' : 'findings')
  auditBadge.appendChild(doc.createTextNode(model.findings.length === 0 ? '✓ audit clean' : `⚠ ${model.findings.length} audit finding(s)`))
  header.appendChild(auditBadge)
  return header
}
