// What a user of @turnlog/hermes runs: a small hermes-agent state.db (hermes' own schema, written here
// with better-sqlite3 the way hermes' SessionDB writes it: a tool round trip, a compaction that re-inserts
// the kept head around a summary, a rewound reply) imported into embedded PGlite; turnlog's live view
// must equal hermes' active rows, and a second import must write nothing. Throws if not.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import Database from 'better-sqlite3'
import { audit, messageIdFromExternal, openStore } from 'turnlog'
import { hermesSessionId, importHermes } from '@turnlog/hermes'

const dir = mkdtempSync(join(tmpdir(), 'hermes-sample-'))
const path = join(dir, 'state.db')
const db = new Database(path)
db.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, model TEXT, parent_session_id TEXT, started_at REAL NOT NULL,
  ended_at REAL, end_reason TEXT, title TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0, system_prompt TEXT);
CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
  content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER, finish_reason TEXT,
  reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT, codex_reasoning_items TEXT, codex_message_items TEXT,
  platform_message_id TEXT, observed INTEGER DEFAULT 0, _compressed_summary INTEGER NOT NULL DEFAULT 0,
  active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0, api_content TEXT, display_kind TEXT, display_metadata TEXT)`)
let clock = 1_760_000_000.000123
db.prepare('INSERT INTO sessions (id, source, model, started_at, title) VALUES (?, ?, ?, ?, ?)').run(
  'cli-1',
  'cli',
  'qwen3-max',
  clock,
  'README',
)
const insert = db.prepare(
  `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, token_count, _compressed_summary)
   VALUES ('cli-1', @role, @content, @toolCallId, @toolCalls, @toolName, @timestamp, @tokens, @summary)`,
)
function add(
  role: string,
  content: string | null,
  extra: { toolCallId?: string; toolCalls?: unknown; toolName?: string; tokens?: number; summary?: boolean } = {},
): number {
  clock += 1.25
  const row = insert.run({
    role,
    content,
    toolCallId: extra.toolCallId ?? null,
    toolCalls: extra.toolCalls === undefined ? null : JSON.stringify(extra.toolCalls),
    toolName: extra.toolName ?? null,
    timestamp: clock,
    tokens: extra.tokens ?? null,
    summary: extra.summary === true ? 1 : 0,
  })
  return Number(row.lastInsertRowid)
}
const question = add('user', "What's in README.md?", { tokens: 9 })
add('assistant', '', {
  toolCalls: [{ id: 'call_1', type: 'function', function: { name: 'read_file', arguments: '{"path":"README.md"}' } }],
})
add('tool', '# acme', { toolCallId: 'call_1', toolName: 'read_file' })
add('assistant', 'A title: "# acme".')
// hermes' archive_and_compact: every active row archived, the kept head re-inserted around a summary
db.prepare("UPDATE messages SET active = 0, compacted = 1 WHERE session_id = 'cli-1' AND active = 1").run()
add('user', "What's in README.md?")
add('user', '[CONTEXT COMPACTION] README.md read: it holds a title.', { summary: true })
add('user', 'Thanks!')
const rewound = add('assistant', 'Anything else?')
db.prepare('UPDATE messages SET active = 0, compacted = 0 WHERE id = ?').run(rewound) // `/undo`
add('assistant', "You're welcome.")
db.close()

const store = await openStore({ embedded: true })
try {
  const first = await importHermes(store, path, { tenantId: 'me' })
  const session = first.sessions[0]
  if (first.sessions.length !== 1 || session === undefined || session.sessionId !== hermesSessionId('cli-1'))
    throw new Error(`unexpected sessions: ${JSON.stringify(first.sessions)}`)
  if (!session.liveMatches || session.rows !== 9 || session.compactions !== 1 || session.rewinds !== 1 || session.keptCopies !== 1)
    throw new Error(`unexpected import: ${JSON.stringify(session)}`)
  const { messages } = await store.load(session.sessionId)
  const live = messages.map((m) => `${m.payload.role}: ${String(m.payload.content)}`)
  const expected = [
    "user: What's in README.md?",
    'user: [CONTEXT COMPACTION] README.md read: it holds a title.',
    'user: Thanks!',
    "assistant: You're welcome.",
  ]
  if (JSON.stringify(live) !== JSON.stringify(expected)) throw new Error(`live view: ${JSON.stringify(live)}`)
  // the kept copy is the first row's message: same id, same external id
  if (messages[0]?.id !== messageIdFromExternal(`hermes:cli-1:${question}`) || messages[0]?.externalId !== `hermes:cli-1:${question}`)
    throw new Error(`the kept head lost its identity: ${JSON.stringify(messages[0])}`)
  const again = await importHermes(store, path, { tenantId: 'me' })
  if (again.eventsWritten !== 0) throw new Error(`the re-import wrote ${again.eventsWritten} events`)
  const report = await audit(store, session.sessionId)
  if (report.findings.some((f) => f.severity === 'critical')) throw new Error(`audit: ${JSON.stringify(report.findings)}`)
  console.log(
    JSON.stringify({ node: process.version, live: messages.length, events: first.eventsWritten, findings: report.findings.length }),
  )
} finally {
  await store.close()
  rmSync(dir, { recursive: true, force: true })
}
