/* exported renderProblems */
/**
 * The problems: audit findings, pairing, fold anomalies, refused conflicting writes (null when there are
 * none).
 */
function renderProblems(dom: PageDom, model: InspectModel, index: InspectModelIndex, links: PageLinks): HTMLElement | null {
  const { el, add, appendVisible } = dom
  const { pairingNote } = index
  const { jump, idChip } = links
  const problems = el('section', 'problems')
  let problemCount = 0
  const problem = (
    severity: string,
    kind: string,
    text: string,
    ids: readonly string[],
    seqs: readonly number[],
    format?: string,
  ): void => {
    problemCount++
    const row = el('div', `problem sev-${severity}`)
    row.setAttribute('data-finding', kind)
    add(row, el('span', 'sev', severity), el('code', 'kind', kind))
    if (format !== undefined) {
      const f = el('span', 'fmt', format)
      row.setAttribute('data-format', format)
      row.appendChild(f)
    }
    const t = el('span', 'ptext')
    appendVisible(t, text)
    row.appendChild(t)
    for (const s of seqs.slice(0, 8)) {
      const b = el('button', 'seqchip', `#${s}`)
      b.setAttribute('type', 'button')
      b.addEventListener('click', () => jump(`s:${s}`))
      row.appendChild(b)
    }
    for (const id of ids.slice(0, 8)) row.appendChild(idChip(id))
    problems.appendChild(row)
  }
  for (const f of model.findings) {
    const named = f.evidence?.['format']
    problem(f.severity, f.kind, f.explanation, f.messageIds, f.seqs, typeof named === 'string' ? named : undefined)
  }
  if (model.findings.length === 0) {
    for (const [id, note] of pairingNote) problem('error', `pairing:${note.kind}`, note.text, [id], [])
  }
  // the audit reports every fold anomaly and every recorded conflict as a finding of its own: list
  // them apart only when the audit did not (it failed), so each problem shows once and the count
  // matches the header's
  const kinds = new Set(model.findings.map((f) => f.kind))
  if (!kinds.has('fold_anomaly')) for (const a of model.anomalies) problem('error', `fold:${a.kind}`, a.explanation, [], [a.seq])
  if (!kinds.has('message_conflict_attempt')) {
    for (const c of model.conflicts)
      problem(
        'warning',
        'conflict',
        `refused write of other content under ${c.messageId} (${c.reason}) at ${c.detectedAt}`,
        [c.messageId],
        [],
      )
  }
  if (problemCount === 0) return null
  const h = el('h2', undefined, `Problems (${problemCount})`)
  return add(el('section', 'problems-wrap'), h, problems)
}
