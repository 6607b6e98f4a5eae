/**
 * The script of the inspect page: it runs in the browser. This directory is its own TypeScript project
 * (`tsconfig.json` here: the DOM lib, compiled as a classic script, not a module); the build writes it to
 * `dist/page/inspect-page.js`, which `renderInspectHtml` reads and inlines into the HTML it writes. It
 * must stay self-contained: no imports at run time (the model's types come from the CLI project through
 * `import()` types, erased at compile time), no references to anything outside this file. Every text
 * reaches the DOM through `createTextNode`, never as markup.
 */
type InspectModel = import('../build-inspect-model.js').InspectModel
type InspectMessageItem = import('../build-inspect-model.js').InspectMessageItem
type InspectEventItem = import('../build-inspect-model.js').InspectEventItem
type InspectSpan = import('../build-inspect-model.js').InspectSpan

/** Renders the timeline from the JSON model embedded in `#turnlog-data` into `#app`. */
function inspectPage(doc: Document): void {
  const dataEl = doc.getElementById('turnlog-data')
  const app = doc.getElementById('app')
  if (dataEl === null || app === null) return
  const model = JSON.parse(dataEl.textContent ?? '{}') as InspectModel
  const PALETTE = ['#7c3aed', '#db2777', '#0891b2', '#ca8a04', '#16a34a', '#ea580c', '#4f46e5']

  const el = (tag: string, cls?: string, text?: string): HTMLElement => {
    const e = doc.createElement(tag)
    if (cls !== undefined) e.className = cls
    if (text !== undefined) e.appendChild(doc.createTextNode(text))
    return e
  }
  const add = (parent: HTMLElement, ...children: HTMLElement[]): HTMLElement => {
    for (const c of children) parent.appendChild(c)
    return parent
  }
  const short = (id: string): string => (id.length > 8 ? `…${id.slice(-8)}` : id)

  /** Appends `text`, showing control characters and lone surrogates as marked symbols. */
  const appendVisible = (parent: HTMLElement, text: string): void => {
    let run = ''
    const flush = (): void => {
      if (run !== '') parent.appendChild(doc.createTextNode(run))
      run = ''
    }
    const special = (shown: string, title: string): void => {
      flush()
      const s = el('span', 'ctl', shown)
      s.title = title
      parent.appendChild(s)
    }
    for (let i = 0; i < text.length; i++) {
      const c = text.charCodeAt(i)
      if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
        const d = text.charCodeAt(i + 1)
        if (d >= 0xdc00 && d <= 0xdfff) {
          run += text.slice(i, i + 2)
          i++
          continue
        }
      }
      const hex = c.toString(16).toUpperCase().padStart(4, '0')
      if (c >= 0xd800 && c <= 0xdfff) special(`\\u${hex}`, `lone surrogate U+${hex}`)
      else if (c === 0x0a || c === 0x09) run += text[i] ?? ''
      else if (c < 0x20) special(String.fromCharCode(0x2400 + c), `control character U+${hex}`)
      else if (c === 0x7f) special('\u2421', 'control character U+007F')
      else if (c >= 0x80 && c < 0xa0) special(`\\x${hex.slice(2)}`, `control character U+${hex}`)
      else if (c === 0x2028 || c === 0x2029 || (c >= 0x202a && c <= 0x202e) || (c >= 0x2066 && c <= 0x2069))
        special(`\\u${hex}`, `invisible formatting character U+${hex}`)
      else run += text[i] ?? ''
    }
    flush()
  }
  const textBlock = (cls: string, text: string, limit: number): HTMLElement => {
    const box = el('div', cls)
    if (text.length <= limit) {
      appendVisible(box, text)
      return box
    }
    const head = el('span')
    appendVisible(head, text.slice(0, limit))
    const rest = el('span', 'rest')
    appendVisible(rest, text.slice(limit))
    const more = el('button', 'more', `show all (${text.length} characters)`)
    more.setAttribute('type', 'button')
    more.addEventListener('click', () => {
      box.classList.add('expanded')
    })
    return add(box, head, rest, more)
  }

  // what points at what
  const items = model.items
  const messages = items.filter((i): i is InspectMessageItem => i.kind === 'message')
  const eventBySeq = new Map<number, InspectEventItem>()
  for (const i of items) if (i.kind === 'event') eventBySeq.set(i.seq, i)
  const liveSet = new Set(model.live)
  const pairingNote = new Map<string, { kind: string; text: string }>()
  for (const u of model.pairing.unanswered)
    pairingNote.set(u.messageId, { kind: 'unanswered', text: `unanswered tool call ${u.toolCallId}: no result follows it` })
  for (const o of model.pairing.orphans)
    pairingNote.set(o.messageId, { kind: 'orphan', text: `orphan tool result: no call ${o.toolCallId} before it` })
  for (const d of model.pairing.duplicates) {
    for (const id of d.messageIds)
      pairingNote.set(id, { kind: 'duplicate', text: `one of ${d.messageIds.length} results for tool call ${d.toolCallId}` })
  }
  const findingsById = new Map<string, InspectModel['findings'][number][]>()
  const findingsBySeq = new Map<number, InspectModel['findings'][number][]>()
  for (const f of model.findings) {
    for (const id of f.messageIds) findingsById.set(id, [...(findingsById.get(id) ?? []), f])
    for (const s of f.seqs) findingsBySeq.set(s, [...(findingsBySeq.get(s) ?? []), f])
  }
  const rowFor = new Map<string, HTMLElement>()
  const jump = (key: string): void => {
    const target = rowFor.get(key)
    if (target === undefined) return
    target.scrollIntoView({ block: 'center', behavior: 'smooth' })
    target.classList.add('flash')
    setTimeout(() => target.classList.remove('flash'), 1200)
  }
  const idChip = (id: string): HTMLElement => {
    const b = el('button', 'idchip', short(id))
    b.setAttribute('type', 'button')
    b.title = id
    b.addEventListener('click', () => jump(`m:${id}`))
    return b
  }

  // header
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
  app.appendChild(header)

  // fork lineage
  if (model.lineage.ancestors.length > 0 || model.lineage.children.length > 0 || !model.lineage.childrenComplete) {
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
    app.appendChild(lin)
  }

  // problems: audit findings, pairing, fold anomalies, refused conflicting writes
  const problems = el('section', 'problems')
  let problemCount = 0
  const problem = (severity: string, kind: string, text: string, ids: readonly string[], seqs: readonly number[]): void => {
    problemCount++
    const row = el('div', `problem sev-${severity}`)
    row.setAttribute('data-finding', kind)
    add(row, el('span', 'sev', severity), el('code', 'kind', kind))
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
  for (const f of model.findings) problem(f.severity, f.kind, f.explanation, f.messageIds, f.seqs)
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
  if (problemCount > 0) {
    const h = el('h2', undefined, `Problems (${problemCount})`)
    const wrap = add(el('section', 'problems-wrap'), h, problems)
    app.appendChild(wrap)
  }

  // controls and legend
  const controls = el('div', 'controls')
  const filters: [string, string][] = [
    ['all', 'full history'],
    ['live', 'live list only'],
    ['changes', 'hide superseded versions'],
  ]
  const buttons: HTMLElement[] = []
  const timeline = el('section', 'timeline')
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
  app.appendChild(controls)

  // brackets: one lane per rewind / compaction, from its first covered message to its event
  const rowIndex = new Map<number, number>()
  items.forEach((item, i) => rowIndex.set(item.seq, i))
  interface Lane {
    span: InspectSpan
    start: number
    end: number
    members: Set<number>
    color: string
    lane: number
  }
  const lanes: Lane[] = []
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
  timeline.setAttribute('data-show', 'all')
  timeline.style.setProperty('--lanes', String(laneCount))
  const spanOfEvent = new Map<number, Lane>(lanes.map((l) => [l.span.seq, l]))
  const seqLabel = (s: number): string => {
    const e = eventBySeq.get(s)
    if (e === undefined) return `#${s}`
    return `${e.type === 'messages_retracted' ? 'rewind' : e.type === 'messages_compacted' ? 'compaction' : e.type === 'message_finalized' ? 'finalize' : e.type.replace(/_/g, ' ')} #${s}`
  }

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
    let card: HTMLElement
    if (item.kind === 'message') {
      row.classList.add('msgrow')
      row.setAttribute('data-live', liveSet.has(item.id) ? 'yes' : 'no')
      row.setAttribute('data-status', item.status)
      card = el('article', `card msg role-${item.role} st-${item.status}`)
      card.setAttribute('data-seq', String(item.seq))
      card.setAttribute('data-id', item.id)
      card.setAttribute('data-role', item.role)
      card.setAttribute('data-status', item.status)
      card.setAttribute('data-revision', String(item.revision))
      const head = el('div', 'head')
      add(head, el('span', `role r-${item.role}`, item.role))
      const idEl = el('code', 'mid', short(item.id))
      idEl.title = item.id
      head.appendChild(idEl)
      const status = el('span', `status st-${item.status}`, item.status === 'superseded-revision' ? 'superseded' : item.status)
      head.appendChild(status)
      if (item.revision > 0 || item.status === 'superseded-revision') head.appendChild(el('span', 'tag', `revision ${item.revision}`))
      if (item.partial && item.status !== 'partial') head.appendChild(el('span', 'tag streamed', 'written while streaming'))
      if (item.summaryOf !== null) head.appendChild(el('span', 'tag summary', `summary placed by compaction #${item.summaryOf}`))
      if (item.inheritedFrom !== null) {
        const t = el('span', 'tag inherited', `inherited from ${short(item.inheritedFrom)}`)
        t.title = item.inheritedFrom
        head.appendChild(t)
      }
      if (item.externalId !== null) {
        const t = el('span', 'tag ext')
        appendVisible(t, `platform id ${item.externalId}`)
        head.appendChild(t)
      }
      const note = pairingNote.get(item.id)
      if (note !== undefined && liveSet.has(item.id)) {
        card.classList.add('pairing-problem')
        card.setAttribute('data-pairing', note.kind)
      }
      const found = [...(findingsById.get(item.id) ?? []), ...(findingsBySeq.get(item.seq) ?? [])]
      if (found.length > 0) {
        card.classList.add('has-finding')
        card.setAttribute('data-findings', [...new Set(found.map((f) => f.kind))].join(' '))
        for (const f of new Set(found)) {
          const b = el('span', `fbadge sev-${f.severity}`, `${f.severity}: ${f.kind}`)
          b.title = f.explanation
          head.appendChild(b)
        }
      }
      head.appendChild(el('time', 'when', item.createdAt.replace('T', ' ').replace(/\.\d+Z$/, 'Z')))
      card.appendChild(head)
      const p = item.payload
      const body = el('div', 'body')
      if (item.role === 'tool' && item.toolCalls[0] !== undefined)
        body.appendChild(el('div', 'answers', `← result of ${item.toolCalls[0]}`))
      const content = p.content
      let text = ''
      if (typeof content === 'string') text = content
      else if (Array.isArray(content))
        text = content.map((part) => (typeof part['text'] === 'string' ? String(part['text']) : `[${String(part.type)}]`)).join('\n')
      if (text !== '') body.appendChild(textBlock('content', text, 700))
      else if (!Array.isArray(p.tool_calls)) body.appendChild(el('div', 'empty', '(no content)'))
      if (Array.isArray(p.tool_calls)) {
        const calls = el('div', 'calls')
        for (const c of p.tool_calls) {
          const line = el('div', 'call')
          add(line, el('span', 'arrow', '→'))
          const name = el('b')
          appendVisible(name, c.function?.name ?? c.type ?? 'call')
          line.appendChild(name)
          const args = el('code', 'args')
          appendVisible(args, c.function?.arguments ?? '')
          line.appendChild(args)
          line.appendChild(el('span', 'callid', String(c.id ?? c.call_id ?? '?')))
          calls.appendChild(line)
        }
        body.appendChild(calls)
      }
      if (note !== undefined && liveSet.has(item.id)) body.appendChild(el('div', 'warn', `⚠ ${note.text}`))
      if (item.changedBy.length > 0) {
        const f = el('div', 'fate')
        f.appendChild(el('span', undefined, item.status === 'superseded-revision' ? 'superseded; later: ' : 'changed by: '))
        for (const s of item.changedBy) {
          const b = el('button', 'seqchip', eventBySeq.has(s) ? seqLabel(s) : `revision #${s}`)
          b.setAttribute('type', 'button')
          b.addEventListener('click', () => jump(`s:${s}`))
          f.appendChild(b)
        }
        body.appendChild(f)
      }
      const details = el('details', 'raw')
      details.appendChild(el('summary', undefined, 'payload JSON'))
      const pre = el('pre')
      appendVisible(pre, JSON.stringify(p, null, 2))
      details.appendChild(pre)
      body.appendChild(details)
      card.appendChild(body)
      rowFor.set(`m:${item.id}`, row)
    } else {
      row.classList.add('evrow')
      card = el('article', `card event ev-${item.type}`)
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
      const lane = spanOfEvent.get(item.seq)
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
    }
    rowFor.set(`s:${item.seq}`, row)
    row.appendChild(card)
    timeline.appendChild(row)
  })
  if (items.length === 0) timeline.appendChild(el('p', 'empty', 'This session has no events yet.'))
  app.appendChild(timeline)
  app.appendChild(
    el(
      'footer',
      undefined,
      `turnlog inspect · format ${model.formatVersion} · generated ${model.generatedAt} · ${items.length} timeline entries`,
    ),
  )
  doc.body.setAttribute('data-rendered', 'ok')
  doc.body.setAttribute('data-items', String(items.length))
}

inspectPage(document)
