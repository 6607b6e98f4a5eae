import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { listCompression } from '../src/langgraph-compression.js'
import { langGraphText, langGraphTextKind, sentencesOf, stepMessage } from '../src/langgraph-text.js'
import { prng } from '../src/workload.js'

// The langgraph workload's storage ratio depends on how compressible its text is: the text must be
// what the module says (deterministic, prose from real documentation, tool results from real JSON),
// and the compression figure the bench reports must come from the server.
let db: TestDatabase

beforeAll(async () => {
  db = await createTestDatabase()
})

afterAll(async () => {
  await db.drop()
})

describe('the langgraph workload text', () => {
  it('keeps the sentences of markdown prose, without code, headings, tables, HTML or link targets', () => {
    // a README's shapes: a heading, prose over two lines, a code fence, a table row, a list item, HTML, a changelog line
    const markdown = `# Title

This is the [first sentence](https://example.com/a) of a paragraph. And this **second one** follows it
on the next line!

\`\`\`ts
const code = "is not prose at all, even if it is long enough"
\`\`\`

| a table | row that is long enough to count as text |
- A list item that reads like a sentence without a full stop

<img src="x.png"> Short.
- [#12](https://github.com/o/r/pull/12) [\`a4fb396\`](https://github.com/o/r/commit/a4fb396) Thanks [@someone](https://github.com/someone)! - Fix the reader so it handles a closed stream.`
    expect(sentencesOf(markdown)).toEqual([
      'This is the first sentence of a paragraph.',
      'And this second one follows it on the next line!',
      'A list item that reads like a sentence without a full stop.',
      'Fix the reader so it handles a closed stream.',
    ])
  })

  it('writes the same text for the same seed, of the length asked, from the documentation and manifests of the dependencies', () => {
    const prose = langGraphText('prose')
    const a = prng(7)
    const b = prng(7)
    const passages = [prose.passage(a, 500), prose.passage(a, 1500), prose.toolResult(a, 800)]
    expect([prose.passage(b, 500), prose.passage(b, 1500), prose.toolResult(b, 800)]).toEqual(passages)
    expect(passages.map((p) => p.length)).toEqual([500, 1500, 800])
    // running English: mostly letters and spaces, many distinct words
    const words = passages[1]?.split(/\s+/) ?? []
    expect(new Set(words.map((w) => w.toLowerCase())).size).toBeGreaterThan(100)
    // a tool result is lines of package.json files
    expect(passages[2]).toMatch(/"[\w@/.-]+": /)
  })

  it('keeps the old 32-word vocabulary as the other kind, and reads the kind from the environment', () => {
    const vocabulary = langGraphText('vocabulary')
    const words = new Set(vocabulary.passage(prng(1), 2000).trim().split(' ').slice(0, -1))
    expect(words.size).toBeLessThanOrEqual(32)
    expect(langGraphTextKind({})).toBe('prose')
    expect(langGraphTextKind({ TURNLOG_BENCH_LANGGRAPH_TEXT: 'vocabulary' })).toBe('vocabulary')
    expect(() => langGraphTextKind({ TURNLOG_BENCH_LANGGRAPH_TEXT: 'lorem' })).toThrow(/prose or vocabulary/)
  })

  it('makes a ReAct turn of a question, a tool call, its result and an answer', () => {
    const rand = prng(3)
    const turn = [0, 1, 2, 3].map((step) => stepMessage(langGraphText('prose'), rand, 9, step))
    expect(turn.map((m) => m.constructor)).toEqual([HumanMessage, AIMessage, ToolMessage, AIMessage])
    expect(turn.map((m) => m.id)).toEqual(['m-9-0', 'm-9-1', 'm-9-2', 'm-9-3'])
    expect((turn[1] as AIMessage).tool_calls?.[0]?.id).toBe((turn[2] as ToolMessage).tool_call_id)
  })

  it('measures on the server that prose compresses less than the vocabulary', async () => {
    const { ratios, method } = await listCompression(db.connectionString, 2, 24)
    expect(['pglz', 'lz4']).toContain(method)
    expect(ratios.vocabulary).toBeGreaterThan(2)
    expect(ratios.prose).toBeGreaterThan(1)
    expect(ratios.prose).toBeLessThan(ratios.vocabulary)
  })
})
