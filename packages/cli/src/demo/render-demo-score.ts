import { shortId } from '../format-text.js'
import type { PersistenceScore } from './score-persistence.js'
import type { DemoSummary } from './demo-summary.js'

function naiveDetail(c: PersistenceScore, labels: Readonly<Record<string, string>>): string[] {
  const name = (id: string): string => `${labels[id] ?? 'a message'} ${shortId(id)}`
  const lines: string[] = []
  if (c.lostIds.length > 0) lines.push(`    never written: ${c.lostIds.map(name).join('; ')}`)
  if (c.duplicatedIds.length > 0) lines.push(`    written twice: ${c.duplicatedIds.map(name).join('; ')} (the redelivery)`)
  if (c.staleIds.length > 0) lines.push(`    old content only: ${c.staleIds.map(name).join('; ')}`)
  if (c.scaffoldingStored > 0) lines.push(`    scaffolding stored: the "please continue" nudge, which a resume would send to the model`)
  return lines
}

/** The demo's closing table: turnlog against the cursor persister, and how to explore the database. */
export function renderDemoScore(s: DemoSummary): string {
  const t = s.turnlog
  const c = s.cursorPersister
  const row = (name: string, v: PersistenceScore, extra: string): string =>
    `  ${name.padEnd(26)} ${String(v.lost).padStart(4)}  ${String(v.duplicated).padStart(10)}  ${String(v.stale).padStart(5)}  ${String(v.scaffoldingStored).padStart(11)}  ${extra}`
  const lines = [
    '',
    `Outcome over the ${t.expected} messages the runtime flushed:`,
    `  ${''.padEnd(26)} lost  duplicated  stale  scaffolding`,
    row('turnlog', t, `${t.events} events; load() = the runtime's list: ${t.liveMatches ? 'yes' : 'NO'}`),
    row('cursor persister (naive)', c, `${c.rows} rows; a resume would replay ${c.resumeCount} messages (correct: ${c.correctLiveCount})`),
    ...naiveDetail(c, s.labels),
    '',
    'Why the cursor persister fails: the live list shrank (rewind, compaction) so `messages[lastFlushed:]` came',
    'back empty; the killed worker took its cursor with it; it cannot recognise a redelivery, a revision or',
    'the end of a stream; and it stored the scaffolding nudge. turnlog keys every write by the message id.',
    '',
    s.ok ? 'turnlog: 0 lost, 0 duplicated, audit clean.' : 'turnlog: FAILED its own demo (see above); please report this.',
  ]
  if (s.database.kept) {
    const flag = s.database.kind === 'embedded' ? `--data-dir ${s.database.where}` : '--database-url <url>'
    lines.push(
      '',
      'Explore it:',
      `  turnlog ${flag} replay ${s.sessionId} --view transcript`,
      `  turnlog ${flag} inspect ${s.sessionId} --html demo.html`,
    )
  } else {
    lines.push('', 'To keep the database and explore it: turnlog demo --data-dir ./demo-db')
  }
  lines.push(`(${(s.durationMs / 1000).toFixed(1)} s)`)
  return lines.join('\n')
}
