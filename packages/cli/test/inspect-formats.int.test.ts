/**
 * `turnlog inspect --html` for a session mixing every built-in message format, rendered in real headless
 * Chromium: each message shows its format badge, its format's preview text and kind, its pairing marks,
 * and the audit's finding names the format of the message it is about. A screenshot is written to a
 * temporary directory (and copied under test-output/ for a look).
 */
import { copyFile, mkdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from '@jest/globals'
import type { TestDatabase } from '@turnlog/testing'
import { createMixedFormatSession, MIXED_FORMAT_MESSAGES } from './support/mixed-format-session.js'
import { headlessChromium } from './support/headless-chromium.js'
import { runTurnlog } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const OUTPUT = fileURLToPath(new URL('../../../test-output/', import.meta.url))
/** Per-test timeout: the binary and Chromium each start twice, and a loaded CI runner is slow. */
const SLOW = 240_000

let db: TestDatabase
let dir: string
let profile: string
let sessionId = ''
let ids: Record<string, string> = {}

const chromium = (args: string[]): Promise<string> => headlessChromium(profile, args)

/** The text of an HTML fragment as the DOM dump escapes it. */
const escaped = (text: string): string => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

useDatabaseAndDir('turnlog-inspect-formats-', (made) => ({ db, dir } = made))

beforeAll(async () => {
  profile = join(dir, 'chromium-profile')
  ;({ sessionId, ids } = await createMixedFormatSession(db.connectionString))
})

describe('turnlog inspect --html with every message format', () => {
  it(
    'renders each format: badge, preview text, kind, pairing marks, findings naming the format; and a screenshot',
    async () => {
      // given
      const file = join(dir, 'formats.html')
      expect((await runTurnlog(['--database-url', db.connectionString, 'inspect', sessionId, '--html', file])).code).toBe(0)
      expect(await readFile(file, 'utf8')).toContain('turnlog-data')

      // when
      const dom = await chromium(['--dump-dom', `file://${file}`])
      const screenshot = join(dir, 'formats.png')
      await chromium([`--screenshot=${screenshot}`, '--window-size=1280,2400', `file://${file}`])

      // then: every message has its card, with its format and the text its format's preview gives
      expect(dom).toMatch(/<body[^>]* data-rendered="ok"/)
      const card = (name: string): string => {
        const start = dom.search(new RegExp(`<article class="card msg[^"]*"[^>]*data-id="${ids[name]}"`))
        if (start < 0) throw new Error(`no card for ${name} (${ids[name]})`)
        return dom.slice(start, dom.indexOf('</article>', start))
      }
      for (const m of MIXED_FORMAT_MESSAGES) {
        const html = card(m.name)
        expect(html).toContain(`data-format="${m.format}"`)
        expect(html).toContain(`<span class="fmt" title="message format ${m.format}">${m.format}</span>`)
        expect(html).toContain(escaped(m.shows))
        expect(html).toContain('data-status="live"')
      }
      expect(new Set(MIXED_FORMAT_MESSAGES.map((m) => m.format)).size).toBe(7)
      // kinds and speakers from each format's preview
      expect(card('responses-reasoning')).toContain('data-kind="reasoning"')
      expect(card('chat-call')).toContain('data-kind="tool_calls"')
      expect(card('chat-user')).toContain('data-role="user"')
      // pairing marks: results name the call they answer, calls are marked answered or not
      expect(card('chat-result')).toContain('data-answers="call_chat_1"')
      expect(card('responses-output')).toContain('data-answers="call_resp_1"')
      expect(card('anthropic-result')).toContain('data-answers="toolu_01"')
      expect(card('model-result')).toContain('data-answers="call_model_1"')
      expect(card('responses-call')).toContain('data-call="call_resp_1" data-call-state="answered"')
      expect(card('anthropic-call')).toContain('data-call="toolu_01" data-call-state="answered"')
      expect(card('model-call')).toContain('data-call="call_model_1" data-call-state="answered"')
      expect(card('ui-answered')).toContain('data-call="call-ui-1" data-call-state="answered"')
      expect(card('ui-answered')).toContain('data-answers="call-ui-1"')
      // the one unanswered call: highlighted, and the audit's finding names its format
      const unanswered = card('agents-unanswered')
      expect(unanswered).toContain('data-pairing="unanswered"')
      expect(unanswered).toContain('data-call="call_agents_1" data-call-state="unanswered"')
      expect(unanswered).toMatch(/data-findings="[^"]*unanswered_tool_call/)
      expect(dom).toContain('data-finding="unanswered_tool_call" data-format="openai-agents"')
      expect(dom).toMatch(/tool call call_agents_1 of openai-agents message/)
      for (const m of MIXED_FORMAT_MESSAGES.filter((x) => x.name !== 'agents-unanswered')) {
        expect(card(m.name)).not.toContain('data-pairing=')
      }
      // the screenshot is a real PNG with content
      const png = await readFile(screenshot)
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
      expect((await stat(screenshot)).size).toBeGreaterThan(20_000)
      await mkdir(OUTPUT, { recursive: true })
      await copyFile(screenshot, join(OUTPUT, 'inspect-formats.png'))
    },
    SLOW,
  )
})
