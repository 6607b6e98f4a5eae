/* exported renderMessageCard */
/**
 * The card of one message version on the timeline (and the marks of its `row`): role, format, id,
 * status and tags, the findings on it, its content, its tool calls, what changed it, and its payload.
 */
function renderMessageCard(
  dom: PageDom,
  item: InspectMessageItem,
  row: HTMLElement,
  index: InspectModelIndex,
  links: PageLinks,
): HTMLElement {
  const { el, add, short, appendVisible, textBlock } = dom
  const { eventBySeq, liveSet, pairingNote, unansweredCalls, findingsById, findingsBySeq, seqLabel } = index
  const { rowFor, jump } = links
  row.classList.add('msgrow')
  row.setAttribute('data-live', liveSet.has(item.id) ? 'yes' : 'no')
  row.setAttribute('data-status', item.status)
  const roleClass = item.role.replace(/[^A-Za-z0-9_-]/g, '_')
  const card = el('article', `card msg role-${roleClass} st-${item.status}`)
  card.setAttribute('data-seq', String(item.seq))
  card.setAttribute('data-id', item.id)
  card.setAttribute('data-role', item.role)
  card.setAttribute('data-format', item.format)
  card.setAttribute('data-kind', item.previewKind)
  card.setAttribute('data-status', item.status)
  card.setAttribute('data-revision', String(item.revision))
  const head = el('div', 'head')
  const roleEl = el('span', `role r-${roleClass}`)
  appendVisible(roleEl, item.role)
  head.appendChild(roleEl)
  const fmt = el('span', 'fmt', item.format)
  fmt.title = `message format ${item.format}`
  head.appendChild(fmt)
  if (item.previewKind !== 'text') {
    const k = el('span', 'pkind')
    appendVisible(k, item.previewKind)
    head.appendChild(k)
  }
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
  const chat = item.format === 'openai-chat'
  const answers = item.answers
  for (const a of answers) {
    const line = el('div', 'answers')
    line.setAttribute('data-answers', a)
    appendVisible(line, `← result of ${a}`)
    body.appendChild(line)
  }
  const content = p.content
  let text = ''
  if (!chat) text = item.previewText
  else if (typeof content === 'string') text = content
  else if (Array.isArray(content))
    text = content.map((part) => (typeof part['text'] === 'string' ? String(part['text']) : `[${String(part.type)}]`)).join('\n')
  if (text !== '') body.appendChild(textBlock('content', text, 700))
  else if (!Array.isArray(p.tool_calls) && item.opens.length === 0) body.appendChild(el('div', 'empty', '(no content)'))
  // the calls a message of another format opens: its ids, each marked answered or not
  if (!chat && item.opens.length > 0) {
    const calls = el('div', 'calls')
    for (const id of item.opens) {
      const open = unansweredCalls.has(`${item.id}\u0000${id}`)
      const line = el('div', open ? 'call unanswered' : 'call')
      line.setAttribute('data-call', id)
      line.setAttribute('data-call-state', open ? 'unanswered' : 'answered')
      add(line, el('span', 'arrow', '→'))
      const cid = el('b')
      appendVisible(cid, id)
      line.appendChild(cid)
      line.appendChild(el('span', 'state', open ? 'no result' : liveSet.has(item.id) ? 'answered' : ''))
      calls.appendChild(line)
    }
    body.appendChild(calls)
  }
  if (chat && Array.isArray(p.tool_calls)) {
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
      const callId = String(c.id ?? c.call_id ?? '?')
      line.appendChild(el('span', 'callid', callId))
      if (unansweredCalls.has(`${item.id}\u0000${callId}`)) {
        line.classList.add('unanswered')
        line.setAttribute('data-call-state', 'unanswered')
      }
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
  return card
}
