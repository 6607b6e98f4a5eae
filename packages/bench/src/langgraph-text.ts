/**
 * The text of the `langgraph` workload's messages. Both kinds are drawn from a seeded generator, so a
 * run writes the same bytes every time; what differs is how much Postgres's compression (pglz, TOAST)
 * can take out of them, which decides the stock saver's bytes on disk (it stores the whole message list
 * at every step, compressed).
 *
 * - `prose` (the default): English sentences from the READMEs and changelogs of the bench's own
 *   dependencies, a passage of consecutive sentences per message (so a message reads like a paragraph of
 *   documentation, the way assistants quote and explain it), and tool results that are runs of lines of
 *   one of those packages' `package.json` files (real JSON, as a tool reading a file returns). Fixed by
 *   the lockfile: the same files every run.
 * - `vocabulary`: words drawn uniformly from a 32-word vocabulary (the workload's text before prose);
 *   it compresses far better than natural text.
 *
 * @packageDocumentation
 */

import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

/** The two kinds of text the workload can write (see the module's doc). */
export type LangGraphTextKind = 'prose' | 'vocabulary'

/** Where a message's text comes from: a passage, a short query (a tool call's argument), a tool result. */
export interface LangGraphText {
  readonly kind: LangGraphTextKind
  /** About `bytes` characters of running text. */
  passage(rand: () => number, bytes: number): string
  /** About `bytes` characters of a tool's output. */
  toolResult(rand: () => number, bytes: number): string
}

const WORDS =
  'the of and to in is you that it was for on are as with they at be this have from or one had by word but not what all were we'.split(' ')

/** The bench's dependencies whose documentation is the prose (paths under the bench package's node_modules). */
const PROSE_FILES = [
  'pg/README.md',
  'pg-copy-streams/README.md',
  '@langchain/core/README.md',
  '@langchain/core/CHANGELOG.md',
  '@langchain/langgraph-checkpoint/README.md',
  '@langchain/langgraph-checkpoint-postgres/README.md',
  '@opentelemetry/api/README.md',
  '@opentelemetry/sdk-metrics/README.md',
  '@opentelemetry/sdk-trace/README.md',
  '@opentelemetry/context-async-hooks/README.md',
] as const

/** The same packages' manifests: the tool results' JSON. */
const JSON_FILES = PROSE_FILES.map((f) => f.replace(/\/[^/]+$/, '/package.json')).filter((f, i, all) => all.indexOf(f) === i)

/** A file of the bench package's dependencies (resolved from this module: packages/bench/dist or src). */
function dependencyFile(path: string): string {
  return readFileSync(fileURLToPath(new URL(`../node_modules/${path}`, import.meta.url)), 'utf8')
}

/**
 * The prose sentences of a markdown text, in order: code blocks, HTML, headings, tables and quotes
 * left out, links reduced to their text, list items and paragraphs split into sentences; kept are
 * sentences of 30–400 characters, at least 80% letters and spaces, without a URL.
 */
export function sentencesOf(markdown: string): string[] {
  const text = markdown
    .replace(/```[\s\S]*?```/g, '\n')
    .replace(/<!--[\s\S]*?-->/g, ' ')
    .replace(/<[^>]+>/g, ' ')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/\[([^\]]*)\]\[[^\]]*\]/g, '$1')
    .replace(/\*{1,2}([^*\n]+)\*{1,2}/g, '$1')
  const paragraphs: string[] = []
  let current: string[] = []
  const close = (): void => {
    if (current.length > 0) paragraphs.push(current.join(' '))
    current = []
  }
  for (const line of text.split('\n')) {
    if (line.trim() === '' || /^\s*(#|\||>|-{3,}|={3,})/.test(line)) close()
    else if (/^\s*([-*+]|\d+\.)\s+/.test(line)) {
      close()
      current.push(line.replace(/^\s*([-*+]|\d+\.)\s+/, ''))
    } else current.push(line.trim())
  }
  close()
  const out: string[] = []
  for (const paragraph of paragraphs) {
    // a changelog entry's prefix: the pull request, the commit and the author
    const body = paragraph
      .replace(/^#\d+ `[0-9a-f]+` Thanks @[\w-]+! - /, '')
      .replace(/\s+/g, ' ')
      .trim()
    for (const part of body.split(/(?<=[.!?])\s+(?=[A-Z`])/)) {
      const sentence = part.trim()
      if (sentence.length < 30 || sentence.length > 400 || /https?:/.test(sentence)) continue
      if ((sentence.match(/[A-Za-z ]/g) ?? []).length / sentence.length < 0.8) continue
      out.push(/[.!?:]$/.test(sentence) ? sentence : `${sentence}.`)
    }
  }
  return out
}

/** A run of `parts` from index `start`, wrapping around, joined by `separator`, until `bytes` characters; cut there. */
function runOf(parts: readonly string[], start: number, bytes: number, separator: string): string {
  let i = start
  let out = ''
  while (out.length < bytes) {
    out += (out === '' ? '' : separator) + (parts[i % parts.length] as string)
    i++
  }
  return out.slice(0, bytes)
}

let prose: LangGraphText | undefined

/** The text of `kind` (the prose corpus is read once). */
export function langGraphText(kind: LangGraphTextKind): LangGraphText {
  if (kind === 'vocabulary') {
    const words = (rand: () => number, bytes: number): string => {
      let out = ''
      while (out.length < bytes) out += `${WORDS[Math.floor(rand() * WORDS.length)] ?? 'x'} `
      return out.slice(0, bytes)
    }
    return { kind, passage: words, toolResult: words }
  }
  if (prose === undefined) {
    const sentences = PROSE_FILES.flatMap((f) => sentencesOf(dependencyFile(f)))
    const manifests = JSON_FILES.map((f) =>
      dependencyFile(f)
        .split('\n')
        .filter((l) => l.trim() !== ''),
    )
    // the manifests one after another; a result starts in one of them, each as likely as another (one is
    // mostly a long, repetitive exports map), and runs on into the next rather than repeating itself
    const lines = manifests.flat()
    const starts = manifests.map((_, i) => manifests.slice(0, i).reduce((n, m) => n + m.length, 0))
    prose = {
      kind,
      passage: (rand, bytes) => runOf(sentences, Math.floor(rand() * sentences.length), bytes, ' '),
      toolResult: (rand, bytes) => {
        const f = Math.floor(rand() * manifests.length)
        return runOf(lines, (starts[f] as number) + Math.floor(rand() * (manifests[f] as string[]).length), bytes, '\n')
      },
    }
  }
  return prose
}

/** The text kind the workload writes: `TURNLOG_BENCH_LANGGRAPH_TEXT` (`prose`, the default, or `vocabulary`). */
export function langGraphTextKind(env: NodeJS.ProcessEnv = process.env): LangGraphTextKind {
  const value = env['TURNLOG_BENCH_LANGGRAPH_TEXT'] ?? 'prose'
  if (value !== 'prose' && value !== 'vocabulary') throw new Error(`TURNLOG_BENCH_LANGGRAPH_TEXT must be prose or vocabulary, got ${value}`)
  return value
}

/** The message a ReAct step adds: a question, a tool call, its result, an answer, in turn (`m-<thread>-<step>`). */
export function stepMessage(text: LangGraphText, rand: () => number, thread: number, step: number): BaseMessage {
  const id = `m-${thread}-${step}`
  switch (step % 4) {
    case 0:
      return new HumanMessage({ id, content: text.passage(rand, 60 + Math.floor(rand() * 500)) })
    case 1:
      return new AIMessage({
        id,
        content: '',
        tool_calls: [{ id: `call_${thread}_${step}`, name: 'search', args: { q: text.passage(rand, 80) }, type: 'tool_call' }],
      })
    case 2:
      return new ToolMessage({
        id,
        tool_call_id: `call_${thread}_${step - 1}`,
        content: text.toolResult(rand, 200 + Math.floor(rand() * 2000)),
      })
    default:
      return new AIMessage({ id, content: text.passage(rand, 200 + Math.floor(rand() * 1500)) })
  }
}
