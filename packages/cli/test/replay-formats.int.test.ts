/**
 * `turnlog replay` on a session mixing every built-in message format: `--view wire --json` returns each
 * payload verbatim, in its own format's shape (nothing converted to chat messages), and `--view live`
 * shows each message through its format's preview.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, type Message } from '@turnlog/core'
import { openStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { createMixedFormatSession, MIXED_FORMAT_MESSAGES } from './support/mixed-format-session.js'
import { runTurnlog } from './support/run-turnlog.js'

/** Per-test timeout: each test spawns the binary, and a loaded CI runner is slow. */
const SLOW = 120_000

let db: TestDatabase
let sessionId = ''
let ids: Record<string, string> = {}

beforeAll(async () => {
  db = await createTestDatabase()
  ;({ sessionId, ids } = await createMixedFormatSession(db.connectionString))
})

afterAll(async () => {
  await db.drop()
})

describe('turnlog replay with every message format', () => {
  it(
    '--view wire --json returns every payload verbatim, in order, each in its own format',
    async () => {
      // when
      const run = await runTurnlog(['--database-url', db.connectionString, 'replay', sessionId, '--view', 'wire', '--json'])
      // then
      expect(run.code).toBe(0)
      const out = run.json<{ sessionId: string; view: string; messages: unknown[] }>()
      expect(out.sessionId).toBe(sessionId)
      expect(out.view).toBe('wire')
      expect(out.messages).toEqual(MIXED_FORMAT_MESSAGES.map((m) => m.payload))
      // key order too: the payload as written, byte for byte once serialised
      expect(out.messages.map((p) => JSON.stringify(p))).toEqual(MIXED_FORMAT_MESSAGES.map((m) => JSON.stringify(m.payload)))
    },
    SLOW,
  )

  it(
    "--view live --json keeps each message's format, and the text view shows every format's preview",
    async () => {
      // when
      const json = await runTurnlog(['--database-url', db.connectionString, 'replay', sessionId, '--view', 'live', '--json'])
      const text = await runTurnlog(['--database-url', db.connectionString, 'replay', sessionId, '--view', 'live'])
      // then
      expect(json.code).toBe(0)
      const live = json.json<{ messages: { id: string; format: string; payload: unknown }[]; pairing: { ok: boolean } }>()
      expect(live.messages.map((m) => [m.id, m.format, m.payload])).toEqual(
        MIXED_FORMAT_MESSAGES.map((m) => [ids[m.name], m.format, m.payload]),
      )
      expect(live.pairing.ok).toBe(false) // the openai-agents call has no result
      expect(text.code).toBe(0)
      const lines = text.stdout.split('\n')
      for (const m of MIXED_FORMAT_MESSAGES) {
        const row = lines.find((l) => l.includes(`…${ids[m.name]!.slice(-8)}`))
        expect(row).toBeDefined()
        expect(row).toContain(m.shows)
      }
      expect(text.stdout).toContain('unanswered call call_agents_1')
    },
    SLOW,
  )

  it(
    'names a tool call id made twice in one message, and --repair-pairing sends it once',
    async () => {
      // given: an assistant message with two tool_calls sharing one id, and one result
      const call = { id: 'call_dup', type: 'function', function: { name: 'get_weather', arguments: '{}' } }
      const store = await openStore({ connectionString: db.connectionString })
      const dup = await store.createSession()
      try {
        const messages: Message[] = [
          createMessage({ role: 'user', content: 'weather?' }),
          createMessage({ role: 'assistant', content: null, tool_calls: [call, call] }),
          createMessage({ role: 'tool', tool_call_id: 'call_dup', content: '18 C' }),
        ]
        await store.append(dup, messages)
      } finally {
        await store.close()
      }
      // when
      const text = await runTurnlog(['--database-url', db.connectionString, 'replay', dup])
      const wire = await runTurnlog(['--database-url', db.connectionString, 'replay', dup, '--view', 'wire', '--repair-pairing', '--json'])
      // then
      expect(text.code).toBe(0)
      expect(text.stdout).toContain('tool-call pairing: call call_dup made 2 times (a provider would reject this list')
      expect(wire.json<{ messages: { tool_calls?: unknown[] }[] }>().messages.map((m) => m.tool_calls?.length ?? 0)).toEqual([0, 1, 0])
    },
    SLOW,
  )

  it(
    'names a tool call id reused per turn, and --repair-pairing sends the later call renamed with its result',
    async () => {
      // given: two turns whose calls are both call_0 (a provider that numbers its calls per turn)
      const call = (city: string) => ({
        id: 'call_0',
        type: 'function',
        function: { name: 'get_weather', arguments: `{"city":"${city}"}` },
      })
      const store = await openStore({ connectionString: db.connectionString })
      const reused = await store.createSession()
      try {
        await store.append(reused, [
          createMessage({ role: 'user', content: 'weather in Oslo?' }),
          createMessage({ role: 'assistant', content: null, tool_calls: [call('Oslo')] }),
          createMessage({ role: 'tool', tool_call_id: 'call_0', content: '3 C' }),
          createMessage({ role: 'user', content: 'and Rome?' }),
          createMessage({ role: 'assistant', content: null, tool_calls: [call('Rome')] }),
          createMessage({ role: 'tool', tool_call_id: 'call_0', content: '18 C' }),
        ])
      } finally {
        await store.close()
      }
      // when
      const text = await runTurnlog(['--database-url', db.connectionString, 'replay', reused])
      const wire = await runTurnlog([
        '--database-url',
        db.connectionString,
        'replay',
        reused,
        '--view',
        'wire',
        '--repair-pairing',
        '--json',
      ])
      // then
      expect(text.code).toBe(0)
      expect(text.stdout).toContain('tool-call pairing: call id call_0 reused for 2 calls (a provider would reject this list')
      const sent = wire.json<{ messages: { tool_calls?: { id: string }[]; tool_call_id?: string }[] }>().messages
      expect(sent.map((m) => m.tool_calls?.[0]?.id ?? m.tool_call_id ?? null)).toEqual([
        null,
        'call_0',
        'call_0',
        null,
        'call_0_2',
        'call_0_2',
      ])
    },
    SLOW,
  )
})
