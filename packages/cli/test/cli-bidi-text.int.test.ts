/**
 * Payload text with bidi controls in every human output of the CLI, run as the built binary: the
 * inspect page (docs/cli.md: "shows NUL and other control characters, lone surrogates and bidi
 * controls as visible marked symbols"), the audit's text (audit.md: "bidi overrides removed so a
 * quoted payload can neither break a line nor reorder what a terminal shows") and the previews of
 * `replay` and `tail` ("Control characters in payloads are shown escaped").
 *
 * Regressions: the inspect page marked the embeddings, overrides and isolates but showed the marks
 * LRM, RLM and ALM (U+200E, U+200F, U+061C; Unicode's Bidi_Control holds all twelve) as they are,
 * invisible, and put an audit finding's explanation, raw bidi controls included, in its tooltips; the
 * audit's text removed all but ALM; `replay` and `tail` printed every bidi control and U+2028/U+2029
 * raw, so a payload could reorder (Trojan Source) what the terminal showed. A finding's explanation
 * now escapes them itself (`\u202e`). `turnlog import` of a hermes state.db printed the file's session
 * ids (in its list and its warnings) raw, ANSI escapes included.
 */
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import Database from 'better-sqlite3'
import { headlessChromium } from './support/headless-chromium.js'
import { runTurnlog } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const SLOW = 120_000

/** Every Bidi_Control character, and the two separators a terminal may treat as line breaks. */
const BIDI = ['\u061c', '\u200e', '\u200f', '\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069']
const HOSTILE = `pay ${BIDI.map((c, i) => `${c}${i}`).join('')} \u2028sep\u2029 end`
const RAW = /[\p{Bidi_Control}\u2028\u2029]/u

let db: TestDatabase
let dir: string
let sessionId = ''

useDatabaseAndDir('turnlog-cli-bidi-', (made) => ({ db, dir } = made))

beforeAll(async () => {
  const store = await openStore({ connectionString: db.connectionString })
  try {
    sessionId = await store.createSession()
    // a partial reply: the audit quotes it in partial_never_finalized
    await store.append(sessionId, [
      createMessage({ role: 'user', content: HOSTILE }),
      createMessage({ role: 'assistant', content: HOSTILE }, { status: 'partial' }),
    ])
  } finally {
    await store.close()
  }
})

const run = (args: string[]) => runTurnlog(['--database-url', db.connectionString, ...args], { cwd: dir })

describe('bidi controls in payloads, in the human outputs', () => {
  it(
    'replay, tail and audit print none of them raw',
    async () => {
      // when
      const [replay, transcript, tail, audited, auditJson] = await Promise.all([
        run(['replay', sessionId]),
        run(['replay', sessionId, '--view', 'transcript']),
        run(['tail', '--session', sessionId, '--from', 'start', '--limit', '2']),
        run(['audit', sessionId, '--fail-on', 'critical']),
        run(['audit', sessionId, '--fail-on', 'critical', '--json']),
      ])

      // then: the text is there, its controls escaped or removed
      for (const [name, r] of Object.entries({ replay, transcript, tail, audited })) {
        expect({ name, code: r.code }).toEqual({ name, code: 0 })
        expect({ name, raw: RAW.test(r.stdout) }).toEqual({ name, raw: false })
      }
      expect(replay.stdout).toContain('pay \\u061c0\\u200e1\\u200f2')
      expect(tail.stdout).toContain('\\u061c0')
      expect(audited.stdout).toMatch(/partial_never_finalized/)
      // the report's explanation itself escapes them (audit.md: "bidi controls escaped"), for every consumer of the JSON
      const [finding] = auditJson.json<{ findings: { kind: string; explanation: string }[] }>().findings
      expect(finding?.kind).toBe('partial_never_finalized')
      expect(RAW.test(finding?.explanation ?? '')).toBe(false)
      expect(finding?.explanation).toContain('\\u061c0\\u200e1\\u200f2\\u202a3')
    },
    SLOW,
  )

  it(
    'import of a hermes state.db prints its session ids and warnings escaped',
    async () => {
      // given: a hermes session id with an ANSI escape and a bidi override, and rows whose clock goes back
      const path = join(dir, 'state.db')
      const hermesId = `evil\u001b[31m${HOSTILE}`
      const sqlite = new Database(path)
      sqlite.exec(`CREATE TABLE sessions (id TEXT PRIMARY KEY, source TEXT, started_at REAL);
        CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT, role TEXT, content TEXT, timestamp REAL)`)
      sqlite.prepare("INSERT INTO sessions VALUES (?, 'cli', 1760000000)").run(hermesId)
      const add = sqlite.prepare('INSERT INTO messages (session_id, role, content, timestamp) VALUES (?, ?, ?, ?)')
      add.run(hermesId, 'user', 'q', 1760000010)
      add.run(hermesId, 'assistant', 'a', 1760000005)
      sqlite.close()

      // when
      const imported = await run(['import', path])

      // then
      if (imported.code !== 0) throw new Error(`turnlog import exited ${String(imported.code)}:\n${imported.stderr}`)
      expect(imported.stdout).toMatch(/warning timestamp_regression/)
      expect(imported.stdout).toContain('evil\\x1b[31m')
      expect(imported.stdout).not.toContain('\u001b')
      expect(RAW.test(imported.stdout)).toBe(false)
    },
    SLOW,
  )

  it(
    'the inspect page shows each as a marked symbol',
    async () => {
      // given
      const file = join(dir, 'bidi.html')
      expect((await run(['inspect', sessionId, '--html', file])).code).toBe(0)
      expect(RAW.test(await readFile(file, 'utf8'))).toBe(false) // the file itself is ASCII

      // when
      const dom = await headlessChromium(join(dir, 'chromium-profile'), ['--dump-dom', `file://${file}`])

      // then
      expect(dom).toMatch(/<body[^>]* data-rendered="ok"/)
      for (const c of BIDI) {
        const hex = c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')
        expect(dom).toContain(`title="invisible formatting character U+${hex}"`)
      }
      expect(RAW.test(dom)).toBe(false)
    },
    SLOW,
  )
})
