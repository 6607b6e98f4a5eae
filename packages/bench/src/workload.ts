import { createMessage, type ChatMessage, type Message } from '@turnlog/core'

/** A deterministic PRNG (mulberry32). */
export function prng(seed: number): () => number {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

const WORDS =
  'the of and to in is you that it he was for on are as with his they at be this have from or one had by word but not what all were we when your can said there use an each which she do how their if will up other about out many then them these so some her would make like him into time has look two more write go see number no way could people my than first water been call who oil its now find long down day did get come made may part'.split(
    ' ',
  )

function text(rand: () => number, bytes: number): string {
  let out = ''
  while (out.length < bytes) out += WORDS[Math.floor(rand() * WORDS.length)] + ' '
  return out.slice(0, bytes)
}

function between(rand: () => number, lo: number, hi: number): number {
  return Math.floor(lo + rand() * (hi - lo))
}

/** One agent turn: the messages one `append` call writes. */
export type Turn = readonly Message[]

/** A generated session: its turns in order. */
export interface GeneratedSession {
  readonly index: number
  readonly turns: readonly Turn[]
  readonly messageCount: number
}

/**
 * Realistic agent traffic, seeded: a user message, then an assistant reply with 0–2 tool calls, their
 * results (200 B–4 KB), and the assistant's answer when it called tools. Mean message ~1 KB.
 */
export function generateSession(seed: number, index: number, messages: number): GeneratedSession {
  const rand = prng(seed * 1_000_003 + index)
  const turns: Message[][] = []
  let count = 0
  let call = 0
  const createdAt = new Date(Date.UTC(2026, 0, 1) + index * 60_000).toISOString()
  const make = (payload: Record<string, unknown>): Message => {
    count++
    return createMessage(payload as ChatMessage, { createdAt })
  }
  while (count < messages) {
    const turn: Message[] = [make({ role: 'user', content: text(rand, between(rand, 60, 600)) })]
    const tools = count + 4 < messages ? Math.floor(rand() * 3) : 0
    if (tools > 0) {
      const calls = Array.from({ length: tools }, () => ({
        id: `call_${index}_${call++}`,
        type: 'function',
        function: { name: rand() < 0.5 ? 'read_file' : 'search', arguments: JSON.stringify({ q: text(rand, between(rand, 20, 200)) }) },
      }))
      turn.push(make({ role: 'assistant', content: null, tool_calls: calls, reasoning_content: text(rand, between(rand, 100, 800)) }))
      for (const c of calls) turn.push(make({ role: 'tool', tool_call_id: c.id, content: text(rand, between(rand, 200, 4096)) }))
    }
    turn.push(make({ role: 'assistant', content: text(rand, between(rand, 200, 2000)), finish_reason: 'stop' }))
    turns.push(turn)
  }
  return { index, turns, messageCount: count }
}
