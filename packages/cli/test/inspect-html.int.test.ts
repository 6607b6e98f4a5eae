/**
 * `turnlog inspect --html` rendered in real headless Chromium: the DOM its inline script builds (statuses,
 * brackets, lineage, pairing problems, findings) and a screenshot under test-output/. The session holds
 * hostile payloads (HTML, a `</script>`, NUL, a lone surrogate) that must render as text.
 */
import { mkdir, readFile, rm, stat } from 'node:fs/promises'
import { join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import type { TestDatabase } from '@turnlog/testing'
import { headlessChromium } from './support/headless-chromium.js'
import { runTurnlog } from './support/run-turnlog.js'
import { useDatabaseAndDir } from './support/use-database-and-dir.js'

const OUTPUT = fileURLToPath(new URL('../../../test-output/', import.meta.url))
const HOSTILE =
  "look: <img src=x onerror=\"document.body.setAttribute('data-pwned','img')\"> and " +
  "</script><script>document.body.setAttribute('data-pwned','script')</script> NUL:\u0000 lone:\ud800 end"

/** Per-test timeout: each test spawns the binary several times, and a loaded CI runner is slow. */
const SLOW = 240_000

let db: TestDatabase
let dir: string
let profile: string
const ids: Record<string, string> = {}
let sessionId = ''
let forkId = ''

const chromium = (args: string[]): Promise<string> => headlessChromium(profile, args)

useDatabaseAndDir('turnlog-inspect-', (made) => ({ db, dir } = made))

beforeAll(async () => {
  profile = join(dir, 'chromium-profile')
  const store = await openStore({ connectionString: db.connectionString })
  try {
    const keep = (name: string, m: Message): Message => {
      ids[name] = m.id
      return m
    }
    sessionId = await store.createSession({ metadata: { title: 'inspect <fixture> & friends' } })
    const system = keep('system', createMessage({ role: 'system', content: 'You are terse.' }))
    const hostile = keep('hostile', createMessage({ role: 'user', content: HOSTILE }, { externalId: `test:${sessionId}:1`, scope: null }))
    const call = keep(
      'call',
      createMessage({
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_a', type: 'function', function: { name: 'grep<b>', arguments: '{"q":"</script>"}' } },
          { id: 'call_b', type: 'function', function: { name: 'never_answered', arguments: '{}' } },
        ],
      }),
    )
    const result = keep('result', createMessage({ role: 'tool', tool_call_id: 'call_a', content: 'match at line 3' }))
    await store.append(sessionId, [system, hostile, call, result])
    const oops = keep('oops', createMessage({ role: 'assistant', content: '(empty)' }))
    await store.append(sessionId, [oops])
    await store.rewind(sessionId, { after: result.id }, { reason: 'drop the sentinel' })
    await store.revise(sessionId, result.id, { role: 'tool', tool_call_id: 'call_a', content: 'match at line 3\n[note: truncated]' })
    const late = keep('late', createMessage({ role: 'user', content: 'And now?' }))
    await store.append(sessionId, [late])
    const summary = keep('summary', createMessage({ role: 'user', content: '[CONTEXT COMPACTION] the user was terse' }))
    await store.compact(sessionId, { covered: [system.id], summary, reason: 'test' })
    const streaming = keep('streaming', createMessage({ role: 'assistant', content: 'Partly wri' }, { status: 'partial' }))
    await store.append(sessionId, [streaming])
    forkId = await store.fork(sessionId, { at: late.id })
  } finally {
    await store.close()
  }
  await mkdir(OUTPUT, { recursive: true })
})

describe('turnlog inspect --html in headless Chromium', () => {
  it(
    'renders the timeline client-side: statuses, brackets, lineage, pairing, findings; payloads stay text',
    async () => {
      // given
      const file = join(dir, 'session.html')
      const written = await runTurnlog(['--database-url', db.connectionString, 'inspect', sessionId, '--html', file, '--json'])
      expect(written.code).toBe(0)
      const html = await readFile(file, 'utf8')
      expect(html).not.toContain('</script><script>document') // the payload never appears as markup
      const ascii = [...html].every((c) => c === '\t' || c === '\n' || (c >= ' ' && c <= '~'))
      expect(ascii).toBe(true) // pure ASCII: every other character is escaped

      // when
      const dom = await chromium(['--dump-dom', `file://${file}`])

      // then: the inline script ran and built the page
      expect(dom).toMatch(/<body[^>]* data-rendered="ok"/)
      expect(dom).not.toMatch(/data-pwned="/) // no injected script ran (the text is in the data blob)
      expect(dom).not.toMatch(/<img\b/)
      const card = (name: string): string => {
        const match = new RegExp(`<article class="card msg[^"]*"[^>]*data-id="${ids[name]}"[^>]*>`).exec(dom)
        if (match === null) throw new Error(`no card for ${name} (${ids[name]})`)
        return match[0]
      }
      expect(card('system')).toContain('data-status="compacted"')
      expect(card('oops')).toContain('data-status="retracted"')
      expect(dom).toMatch(new RegExp(`data-id="${ids['result']}"[^>]*data-status="superseded-revision"`))
      expect(dom).toMatch(new RegExp(`data-id="${ids['result']}"[^>]*data-status="live"[^>]*data-revision="1"`))
      expect(card('streaming')).toContain('data-status="partial"')
      expect(card('summary')).toContain('data-status="live"')
      // the unanswered call is highlighted, and the audit's findings are attached to their messages
      expect(card('call')).toContain('data-pairing="unanswered"')
      expect(card('call')).toMatch(/data-findings="[^"]*unanswered_tool_call/)
      expect(card('streaming')).toMatch(/data-findings="[^"]*partial_never_finalized/)
      expect(dom).toMatch(/data-finding="unanswered_tool_call"/)
      // rewinds and compactions are brackets naming the ids they cover
      expect(dom).toContain(`data-span="rewind" data-covers="${ids['oops']}"`)
      expect(dom).toContain(`data-span="compaction" data-covers="${ids['system']}"`)
      expect(dom).toMatch(/class="lane in start/)
      // fork lineage
      expect(dom).toContain(`data-child="${forkId}"`)
      // hostile text is text: escaped markup, NUL and the lone surrogate made visible
      expect(dom).toContain('&lt;img src=x onerror=')
      expect(dom).toContain('&lt;/script&gt;&lt;script&gt;document.body.setAttribute')
      expect(dom).toContain('title="control character U+0000">\u2400</span>')
      expect(dom).toContain('title="lone surrogate U+D800">\\uD800</span>')
      expect(dom).toContain('inspect &lt;fixture&gt; &amp; friends')
    },
    SLOW,
  )

  it(
    'shows a fork its ancestors and inherited messages, and saves a screenshot',
    async () => {
      // given
      const forkFile = join(dir, 'fork.html')
      const parentFile = join(dir, 'session.html')
      expect((await runTurnlog(['--database-url', db.connectionString, 'inspect', forkId, '--html', forkFile])).code).toBe(0)
      // when
      const dom = await chromium(['--dump-dom', `file://${forkFile}`])
      const screenshot = join(OUTPUT, 'inspect.png')
      await rm(screenshot, { force: true })
      await chromium([`--screenshot=${screenshot}`, '--window-size=1280,2000', `file://${parentFile}`])
      // then
      expect(dom).toContain(`data-ancestor="${sessionId}"`)
      expect(dom).toMatch(/inherited from …/)
      expect(dom).toMatch(/data-event="session_forked"/)
      const png = await readFile(screenshot)
      expect(png.subarray(0, 8).toString('hex')).toBe('89504e470d0a1a0a')
      expect((await stat(screenshot)).size).toBeGreaterThan(20_000)
    },
    SLOW,
  )
})
