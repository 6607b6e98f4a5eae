#!/usr/bin/env node
// The docs' examples, as a new user copies them (part of the packaging test, scripts/packaging-test.mjs,
// which calls `testDocExamples` with its fresh tarballs; alone: `node scripts/docs-examples-test.mjs` packs
// them itself, after the build). Every fenced code block of the user-facing docs (README.md,
// docs/getting-started.md, docs/integrating.md, docs/formats.md, docs/adapters/*.md, packages/*/README.md)
// whose info string is `ts`, `tsx`, `js`, `mjs` or `typescript` is listed in EXAMPLES below, by file and ordinal,
// with the words it begins with and one of four kinds:
//   run      a complete program: compiled with `tsc --strict` in a scratch app outside
//            the repository that installed the packed packages with plain npm, then run there with node,
//            on embedded PGlite;
//   compile  a complete program that needs what a test has not (a model provider's API key, a Postgres
//            server named by DATABASE_URL): compiled as written, not run;
//   excerpt  a fragment: compiled with a declared context (`before`/`after`: the imports and the variables
//            it takes from the surrounding text, typed as the docs describe them); `run: true` when the
//            context gives it real values and it runs too;
//   skip     not compiled, with the reason (a private package, a native dependency, JSX of the user's app).
// A block the table does not list, or whose first words changed, fails the test (so a new example is
// classified when it is written). The `sh` blocks are listed in SHELL: every `npm install` line's packages
// are the ones the scratch app installs (a version range the docs name is the range installed; a page
// with such lines names every package its examples import), and the command-line walk-through of getting-started.md runs against the database its embedded example made.
// Errors name the doc file, the line and the block. TURNLOG_KEEP_PACKAGING_APP=1 keeps the scratch app.
import { spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'
import { fileURLToPath, pathToFileURL } from 'node:url'

/** The files a new user follows, relative to the repository root. */
export function docFiles(root) {
  const adapters = readdirSync(join(root, 'docs', 'adapters'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/adapters/${f}`)
  const readmes = readdirSync(join(root, 'packages'))
    .sort()
    .map((d) => `packages/${d}/README.md`)
    .filter((f) => existsSync(join(root, f)))
  return ['README.md', 'docs/getting-started.md', 'docs/integrating.md', 'docs/formats.md', ...adapters, ...readmes]
}

const CODE = new Set(['ts', 'tsx', 'typescript', 'js', 'javascript', 'mjs'])
const SHELLS = new Set(['sh', 'bash', 'shell', 'console'])

/**
 * The fenced blocks of one markdown text: `{ lang, kind ('code' | 'shell' | 'other'), n (ordinal among
 * the blocks of its kind), line (1-based line of its first code line), code }`. A fence may be indented
 * (inside a list item): the indent is removed from its lines.
 */
export function extractBlocks(text) {
  const lines = text.split('\n')
  const blocks = []
  const counts = { code: 0, shell: 0, other: 0 }
  for (let i = 0; i < lines.length; i++) {
    const open = /^( *)(`{3,})([^`\s]*)[^`]*$/.exec(lines[i])
    if (open === null) continue
    const [, indent, fence, lang] = open
    const body = []
    let j = i + 1
    while (j < lines.length && !new RegExp(`^ *${fence}\\s*$`).test(lines[j])) {
      body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j])
      j++
    }
    const kind = CODE.has(lang) ? 'code' : SHELLS.has(lang) ? 'shell' : 'other'
    blocks.push({ lang, kind, n: ++counts[kind], line: i + 2, code: body.join('\n') })
    i = j
  }
  return blocks
}

// The imports the excerpts take from the text around them (each excerpt names what it needs).
const T = `import { openStore, createMessage, toWire, type Message, type SessionStore } from 'turnlog'`

/**
 * Every code block of the user-facing docs: `file#n` (n counts the file's code blocks) → its kind, the
 * words it begins with, and for an excerpt its context. Context goes `before` the block (values a runnable
 * excerpt needs) or `after` it (declarations and imports, which TypeScript hoists), so the block's own
 * lines keep their numbers in errors.
 */
export const EXAMPLES = {
  'README.md#1': {
    kind: 'excerpt',
    first: "import { openStore, createMessage, toWire } from 'turnlog'",
    why: 'the OpenAI client and model come from the reader',
    after: `import type OpenAI from 'openai'\ndeclare const openai: OpenAI\ndeclare const model: string`,
  },
  'docs/getting-started.md#1': {
    kind: 'run',
    first: "import { openStore, createMessage } from 'turnlog'",
    expect: /hello/,
  },
  'docs/getting-started.md#2': {
    kind: 'excerpt',
    first: 'const store = await openStore({ connectionString: process.env.DATABASE_URL! })',
    why: 'the import is the first example’s; needs a Postgres server',
    after: `import { openStore } from 'turnlog'`,
  },
  'docs/getting-started.md#3': {
    kind: 'excerpt',
    first: 'const db = new Kysely<AppDB>({ dialect: new PostgresDialect({ pool }) })',
    why: "the application's own Kysely database type, pool and values; needs a Postgres server",
    after: [
      `import { Kysely, PostgresDialect, type Generated } from 'kysely'`,
      `import pg from 'pg'`,
      T,
      `interface AppDB { tickets: { id: Generated<number>; title: string; session_id: string } }`,
      `declare const pool: pg.Pool`,
      `declare const title: string`,
      `declare const session: string`,
      `declare const live: Message[]`,
    ].join('\n'),
  },
  'docs/integrating.md#1': {
    kind: 'compile',
    first: '// OpenAI Agents SDK: the session stores every item the runner adds, pops, rewrites or compacts',
    why: 'calls the OpenAI API (a key) and a Postgres server',
  },
  'docs/integrating.md#2': {
    kind: 'excerpt',
    first: '// AI SDK route (POST /api/chat): the post recorded before the model runs, the reply written per step',
    why: "the body of a route handler: the request body, the app's model, tools and validation",
    before: 'export async function POST(body: { id: string } & ChatRequest<ChatMessage>): Promise<Response> {',
    after: [
      '}',
      `import { convertToModelMessages, createUIMessageStream, createUIMessageStreamResponse, streamText, type LanguageModel, type UIMessage } from 'ai'`,
      `import { persistReply, receiveChat, type ChatRequest } from '@turnlog/ai-sdk'`,
      `import type { SessionStore } from 'turnlog'`,
      `import { tools } from '@/ai/tools'`,
      'type ChatMessage = UIMessage',
      'declare const store: SessionStore',
      'declare const model: LanguageModel',
      'declare function validate(messages: unknown[]): Promise<ChatMessage[]>',
    ].join('\n'),
  },
  'docs/integrating.md#3': {
    kind: 'excerpt',
    first: "import OpenAI from 'openai'",
    why: "the tool runner is the reader's (the loop itself runs in the store contract suite, character for character)",
    after: [`import type { ToolCall } from 'turnlog'`, 'declare function runTool(call: ToolCall): Promise<string>'].join('\n'),
  },
  'docs/integrating.md#4': {
    kind: 'excerpt',
    first:
      'live = (await store.revise(session, toolResultId, { ...old.payload, content: `${old.payload.content}\\n[note]` })).applyTo(live)',
    why: 'three independent lines on a session the text describes',
    after: [
      T,
      'declare const store: SessionStore',
      'declare const session: string',
      'declare let live: Message[]',
      'declare const toolResultId: string',
      "declare const old: Message & { payload: { role: 'tool'; tool_call_id: string; content: string } }",
      'declare const failedAttemptId: string',
      'declare const covered: string[]',
      'declare const text: string',
    ].join('\n'),
  },
  'docs/integrating.md#5': {
    kind: 'excerpt',
    first: 'live = [...live.slice(0, 1), summary, ...live.slice(6)]',
    why: "a runtime's list, its summary message and the version it read",
    after: [
      T,
      'declare const store: SessionStore',
      'declare const session: string',
      'declare let live: Message[]',
      'declare const summary: Message',
      'declare const expectedVersion: number',
    ].join('\n'),
  },
  'docs/formats.md#1': {
    kind: 'excerpt',
    first: "createMessage({ role: 'user', content: 'hi' })",
    why: 'two calls under a sentence that imports nothing',
    after: T,
  },
  'docs/formats.md#2': {
    kind: 'excerpt',
    first: 'createMessage(item, { format: ',
    why: "a Responses item, a useChat message and their conversation's ids",
    after: [
      T,
      `import type { ResponseInputItem } from 'openai/resources/responses/responses'`,
      `import type { UIMessage } from 'ai'`,
      'declare const item: ResponseInputItem & { id: string }',
      'declare const uiMessage: UIMessage',
      'declare const conversationId: string',
      'declare const chatId: string',
    ].join('\n'),
  },
  'docs/formats.md#3': {
    kind: 'excerpt',
    first: 'const reply = createMessage(completion.choices[0]!.message, {',
    why: 'a Chat Completions response and the caller’s timing and trace id',
    after: [
      T,
      `import type { ChatCompletion } from 'openai/resources/chat/completions'`,
      'declare const completion: ChatCompletion',
      'declare const latencyMs: number',
      'declare const traceId: string',
    ].join('\n'),
  },
  'docs/formats.md#4': {
    kind: 'excerpt',
    first: "import { createMessage, toWire } from 'turnlog'",
    why: 'the OpenAI client, the stored history and the conversation id',
    after: [
      `import type OpenAI from 'openai'`,
      `import type { Message } from 'turnlog'`,
      `import type { ResponseInputItem } from 'openai/resources/responses/responses'`,
      'declare const openai: OpenAI',
      'declare const history: Message<ResponseInputItem>[]',
      'declare const conversationId: string',
    ].join('\n'),
  },
  'docs/formats.md#5': {
    kind: 'excerpt',
    first: "import { createMessage, toWire } from 'turnlog'",
    why: 'the agent and the stored history',
    after: [
      `import { run, type Agent, type AgentInputItem } from '@openai/agents'`,
      `import type { Message } from 'turnlog'`,
      'declare const agent: Agent',
      'declare const history: Message<AgentInputItem>[]',
    ].join('\n'),
  },
  'docs/formats.md#6': {
    kind: 'excerpt',
    first: "import type { MessageParam } from '@anthropic-ai/sdk/resources/messages'",
    why: 'the Anthropic client, model, token limit and the stored history',
    after: [
      `import type Anthropic from '@anthropic-ai/sdk'`,
      `import { createMessage, toWire, type Message } from 'turnlog'`,
      'declare const anthropic: Anthropic',
      'declare const model: string',
      'declare const max_tokens: number',
      'declare const history: Message<MessageParam>[]',
    ].join('\n'),
  },
  'packages/ai-sdk/README.md#1': {
    kind: 'compile',
    first: 'import {',
    why: "a Next.js route: the model is the AI Gateway's (a key); `@/ai/tools` is the app's module (a stand-in here)",
  },
  'packages/ai-sdk/README.md#2': {
    kind: 'skip',
    first: '// app/chat/[id]/page.tsx',
    why: "a React server component of the user's Next.js app (JSX, its own `Chat` component)",
  },
  'packages/ai-sdk/README.md#3': {
    kind: 'excerpt',
    first: 'return result.toUIMessageStreamResponse({',
    why: 'the end of the route above, in the form without per-step writes',
    before: 'export async function POST(result: StreamTextResult<ToolSet, never>): Promise<Response> {',
    after: [
      '}',
      `import type { StreamTextResult, ToolSet, UIMessage } from 'ai'`,
      `import type { ChatTurn, ReplyPersistence } from '@turnlog/ai-sdk'`,
      'declare const turn: ChatTurn<UIMessage>',
      'declare const reply: ReplyPersistence<UIMessage>',
    ].join('\n'),
  },
  'packages/ai-sdk/README.md#4': {
    kind: 'excerpt',
    first: "app.post('/api/chat', async (req, res) => {",
    why: "an Express app (its body parser gives req.body) around the route's calls",
    after: [
      `import type { IncomingMessage, ServerResponse } from 'node:http'`,
      `import { convertToModelMessages, createUIMessageStream, pipeUIMessageStreamToResponse, stepCountIs, streamText, TypeValidationError, validateUIMessages } from 'ai'`,
      `import type { InferUITools, UIDataTypes, UIMessage } from 'ai'`,
      `import { persistReply, receiveChat, replyChunks, type ChatRequest, type ChatTurn } from '@turnlog/ai-sdk'`,
      `import { isTurnlogError, type SessionStore } from 'turnlog'`,
      `import { tools } from '@/ai/tools'`,
      "// the route's message type (the first example of this README)",
      'type ChatMessage = UIMessage<unknown, UIDataTypes, InferUITools<typeof tools>>',
      'declare const store: SessionStore',
      'declare const app: {',
      '  post(path: string, handler: (req: IncomingMessage & { body: { id: string } & ChatRequest<ChatMessage> }, res: ServerResponse) => Promise<void>): void',
      '}',
    ].join('\n'),
  },
  'packages/ai-sdk/README.md#5': {
    kind: 'excerpt',
    first: "import { generateText, stepCountIs } from 'ai'",
    why: "a server-side loop's store, session, question, request id and tools",
    after: [
      `import type { SessionStore } from 'turnlog'`,
      `import { tools } from '@/ai/tools'`,
      'declare const store: SessionStore',
      'declare const conversationId: string',
      'declare const question: string',
      'declare const requestId: string',
    ].join('\n'),
  },
  'packages/audit/README.md#1': {
    kind: 'excerpt',
    first: "import { createWriteStream, createReadStream } from 'node:fs'",
    why: 'two stores: here two embedded ones, the first with a session, so it runs',
    run: true,
    before: [
      `import { openStore as openStoreForDocs, createMessage as createMessageForDocs } from 'turnlog'`,
      'const store = await openStoreForDocs({ embedded: true })',
      'const otherStore = await openStoreForDocs({ embedded: true })',
      "await store.append(await store.createSession(), [createMessageForDocs({ role: 'user', content: 'hi' })])",
    ].join('\n'),
    after: [
      'if (sessions !== 1 || eventsWritten < 1 || eventsSkipped !== 0) throw new Error(JSON.stringify({ sessions, eventsWritten, eventsSkipped }))',
      "console.log('imported', sessions, 'session,', eventsWritten, 'events')",
      'await store.close()',
      'await otherStore.close()',
    ].join('\n'),
    expect: /imported 1 session/,
  },
  'packages/core/README.md#1': {
    kind: 'run',
    first: "import { createMessage, toWire, contentHash } from '@turnlog/core'",
  },
  'packages/hermes/README.md#1': {
    kind: 'skip',
    first: "import { homedir } from 'node:os'",
    why: '@turnlog/hermes is opt-in and native (better-sqlite3): not in this install; packages/hermes/test/packaging imports a state.db from its tarball',
  },
  'packages/langgraph/README.md#1': {
    kind: 'compile',
    first: "import { openStore } from 'turnlog'",
    why: 'ChatOpenAI calls the OpenAI API (a key); packages/langgraph/test/packaging runs the same graph with a scripted model',
  },
  'packages/langgraph/README.md#2': {
    kind: 'excerpt',
    first: "import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint' // the saver's peer, which @langchain/langgraph brings",
    why: 'the options, with the store they name',
    after: [
      `import { TurnlogCheckpointSaver } from '@turnlog/langgraph'`,
      `import type { PostgresStore } from 'turnlog'`,
      'declare const store: PostgresStore // what openStore returns',
    ].join('\n'),
  },
  'packages/langgraph/README.md#3': {
    kind: 'excerpt',
    first: "import { sessionIdFromExternal } from 'turnlog'",
    why: 'RunnableWithMessageHistory on the chat history, with the store and chain the text names',
    after: [
      `import { TurnlogChatMessageHistory } from '@turnlog/langgraph'`,
      `import type { PostgresStore } from 'turnlog'`,
      `import type { Runnable } from '@langchain/core/runnables'`,
      `import type { BaseMessage } from '@langchain/core/messages'`,
      'declare const store: PostgresStore // what openStore returns',
      'declare const chain: Runnable<Record<string, unknown>, BaseMessage> // a prompt piped to a chat model',
    ].join('\n'),
  },
  'packages/openai-agents/README.md#1': {
    kind: 'compile',
    first: "import { Agent, run, tool } from '@openai/agents' // re-exports @openai/agents-core",
    why: 'calls the OpenAI API (a key); packages/openai-agents/test/packaging runs the same session with a scripted model',
  },
  'packages/postgres/README.md#1': {
    kind: 'compile',
    first: "import { openStore } from '@turnlog/postgres'",
    why: 'its second line needs a Postgres server',
  },
  'packages/testing/README.md#1': {
    kind: 'skip',
    first: "import { afterAll, beforeAll } from '@jest/globals'",
    why: '@turnlog/testing is private (this repository’s own tests)',
  },
}

/**
 * Every `sh` block: `check` (its `npm install` lines name what the scratch app installs), `run` (its
 * commands run in the scratch app, after the example `after` names), or `skip` with the reason.
 */
export const SHELL = {
  'README.md#1': { kind: 'skip', why: "the repository's own demo (a clone); the test command runs `turnlog demo` from the tarballs" },
  'README.md#2': { kind: 'skip', why: 'the test command itself' },
  'docs/getting-started.md#1': { kind: 'check' },
  'docs/getting-started.md#2': { kind: 'check', why: 'docker and the Postgres URL: the server is the reader’s' },
  'docs/getting-started.md#3': {
    kind: 'run',
    after: 'docs/getting-started.md#1',
    why: '`turnlog demo` runs in the packaging test; the others on the ./.turnlog the embedded example made',
    skipLines: [/^npx turnlog demo\b/],
  },
  'packages/ai-sdk/README.md#1': { kind: 'check' },
  'packages/core/README.md#1': { kind: 'check' },
  'packages/postgres/README.md#1': { kind: 'check' },
  'packages/cli/README.md#1': { kind: 'skip', why: '`turnlog demo` runs in the packaging test; the second line needs a Postgres server' },
  'packages/cli/README.md#2': { kind: 'skip', why: "the repository's own tests (a clone)" },
  'packages/hermes/README.md#1': { kind: 'skip', why: '@turnlog/hermes is opt-in and native (better-sqlite3)' },
  'packages/langgraph/README.md#1': { kind: 'check' },
  'packages/openai-agents/README.md#1': { kind: 'check' },
  'packages/testing/README.md#1': { kind: 'skip', why: "the repository's own tests (a clone)" },
}

/**
 * Versions of what the docs install with no version (`npm install ai`), so the test installs the same
 * thing on every run: the adapters' packaging samples' pins, the workspace's own versions, and these.
 */
const EXTRA_PINS = { '@langchain/openai': '1.6.0' }

/** The stand-in for the app module `@/ai/tools` the AI SDK route imports (a Next.js path alias). */
const TOOLS_MODULE = `import { tool } from 'ai'
import { z } from 'zod'

/** A stand-in for the app's tools (the README's route imports them from '@/ai/tools'). */
export const tools = {
  getWeather: tool({
    description: 'The weather in a city',
    inputSchema: z.object({ city: z.string() }),
    execute: async ({ city }) => \`sunny in \${city}\`,
  }),
}
`

/**
 * The check. `ctx`: { root, tarballs (Map name → .tgz), publicNames (names of the public packages),
 * version (name → the workspace's version), step (name, fn), run (cmd, args, options) → stdout, failing
 * the whole test on a non-zero exit, fail (message), scratch (dirs to remove) }. Returns lines for the
 * report.
 */
export function testDocExamples(ctx) {
  const { root, tarballs, step, run, fail } = ctx
  const problems = []
  const blocks = []
  for (const file of docFiles(root)) {
    for (const b of extractBlocks(readFileSync(join(root, file), 'utf8'))) {
      if (b.kind === 'other') continue
      const key = `${file}#${b.n}`
      const table = b.kind === 'code' ? EXAMPLES : SHELL
      const spec = table[key]
      const where = `${file}:${b.line - 1} (${b.kind === 'code' ? 'code' : 'sh'} block ${b.n})`
      if (spec === undefined) {
        problems.push(
          `${where} is not listed in scripts/docs-examples-test.mjs (${b.kind === 'code' ? 'EXAMPLES' : 'SHELL'}): say whether it runs, compiles, is an excerpt or is skipped`,
        )
        continue
      }
      if (spec.first !== undefined && !b.code.startsWith(spec.first)) {
        problems.push(
          `${where} begins with ${JSON.stringify(b.code.split('\n')[0])}, but EXAMPLES['${key}'] expects ${JSON.stringify(spec.first)}: update the table`,
        )
        continue
      }
      blocks.push({ ...b, file, key, where, spec })
    }
  }
  for (const table of [EXAMPLES, SHELL]) {
    for (const key of Object.keys(table)) {
      if (!blocks.some((b) => b.key === key && b.spec === table[key])) {
        if (!problems.some((p) => p.includes(key.split('#')[0])))
          problems.push(`${table === EXAMPLES ? 'EXAMPLES' : 'SHELL'}['${key}'] names no block: the doc changed, update the table`)
      }
    }
  }
  if (problems.length > 0) fail(`the docs' examples:\n  ${problems.join('\n  ')}`)

  // The scratch app's dependencies: what the docs' `npm install` lines name.
  const pins = { ...EXTRA_PINS }
  for (const dir of readdirSync(join(root, 'packages'))) {
    const f = join(root, 'packages', dir, 'test', 'packaging', 'package.json')
    if (existsSync(f)) Object.assign(pins, JSON.parse(readFileSync(f, 'utf8')).dependencies)
  }
  const dependencies = {}
  const installLines = []
  const installedBy = new Map() // file → the package names its `npm install` lines name
  for (const b of blocks.filter((x) => x.kind === 'shell' && x.spec.kind === 'check')) {
    for (const line of b.code.split('\n')) {
      const m = /^npm install((?: +[^\s#]+)+)/.exec(line.trim())
      if (m === null) continue
      installLines.push(`${b.file}: ${line.replace(/#.*$/, '').trim()}`)
      for (const arg of m[1].trim().split(/ +/)) {
        if (arg.startsWith('-')) fail(`${b.where}: \`${line.trim()}\` has an option this test does not know`)
        const at = arg.lastIndexOf('@')
        const [name, range] = at > 0 ? [arg.slice(0, at), arg.slice(at + 1)] : [arg, undefined]
        installedBy.set(b.file, new Set([...(installedBy.get(b.file) ?? []), name]))
        if (tarballs.has(name)) dependencies[name] = `file:${tarballs.get(name)}`
        else if (range !== undefined) dependencies[name] = range
        else if (dependencies[name] === undefined) {
          const pinned = pins[name] ?? ctx.version(name)
          if (pinned === undefined)
            fail(`${b.where}: no pinned version of ${name} (add it to EXTRA_PINS in scripts/docs-examples-test.mjs)`)
          dependencies[name] = pinned
        }
      }
    }
  }
  // A page that says what to install names every package its examples import (their own import lines,
  // not the declared contexts): a reader who follows it has them all.
  const missing = []
  for (const b of blocks.filter((x) => x.kind === 'code' && x.spec.kind !== 'skip' && installedBy.has(x.file))) {
    for (const [, spec] of b.code.matchAll(/^\s*import\b[^'"]*['"]([^'"]+)['"]/gm)) {
      if (spec.startsWith('node:') || spec.startsWith('.') || spec.startsWith('@/')) continue
      const name = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]
      if (!installedBy.get(b.file).has(name)) missing.push(`${b.where} imports ${spec}, which no \`npm install\` line of ${b.file} names`)
    }
  }
  if (missing.length > 0) fail(`the docs' examples:\n  ${missing.join('\n  ')}`)
  // What the examples import besides: the packages a reader of that page has (the core README's
  // @turnlog/core, the SDKs of formats.md, zod for the tools stand-in), the workspace's versions.
  for (const name of ['@turnlog/core', '@turnlog/postgres', '@turnlog/audit'])
    if (tarballs.has(name)) dependencies[name] = `file:${tarballs.get(name)}`
  for (const name of ['openai', '@anthropic-ai/sdk', 'kysely', 'zod', '@types/json-schema', '@langchain/langgraph-checkpoint']) {
    if (dependencies[name] === undefined) dependencies[name] = pins[name] ?? ctx.version(name)
    if (dependencies[name] === undefined) fail(`no version of ${name} in the workspace`)
  }
  // every other public @turnlog/* package from the fresh tarballs, never the registry (an override that
  // repeats a direct dependency's spec exactly is allowed)
  const overrides = Object.fromEntries(
    ctx.publicNames.filter((n) => n !== '@turnlog/hermes').map((n) => [n, dependencies[n] ?? `file:${tarballs.get(n)}`]),
  )

  const app = mkdtempSync(join(tmpdir(), 'turnlog-docs-app-'))
  ctx.scratch.push(app)
  if (!relative(root, app).startsWith('..')) fail(`the scratch app ${app} is inside the repository`)
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify(
      {
        name: 'turnlog-docs-examples',
        private: true,
        type: 'module',
        dependencies,
        overrides,
        devDependencies: { typescript: ctx.version('typescript'), '@types/node': ctx.version('@types/node') },
      },
      null,
      2,
    ),
  )
  step('docs: npm install', () => run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error'], { cwd: app }))

  // One module per block: `before` + the block + `after`; errors are mapped back to the doc's lines.
  mkdirSync(join(app, 'blocks'))
  mkdirSync(join(app, 'stand-ins', 'ai'), { recursive: true })
  writeFileSync(join(app, 'stand-ins', 'ai', 'tools.ts'), TOOLS_MODULE)
  const compiled = blocks.filter((b) => b.kind === 'code' && b.spec.kind !== 'skip')
  const byModule = new Map()
  for (const b of compiled) {
    const name = `${b.file.replace(/[^A-Za-z0-9]+/g, '-')}-${b.n}`
    const before = b.spec.before === undefined ? '' : `${b.spec.before}\n`
    const after = b.spec.after === undefined ? '' : `\n${b.spec.after}`
    writeFileSync(join(app, 'blocks', `${name}.ts`), `${before}${b.code}${after}\nexport {}\n`)
    byModule.set(name, { ...b, offset: before === '' ? 0 : before.split('\n').length - 1 })
    b.module = name
  }
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify(
      {
        compilerOptions: {
          strict: true,
          // the libraries' own declarations (ours included) are checked without skipLibCheck by the
          // packaging samples; here it would cost three times the time on the frameworks' .d.ts
          skipLibCheck: true,
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          types: ['node'],
          outDir: 'out',
          rootDir: '.',
          // the Next.js alias of the AI SDK route (`@/ai/tools`), to the stand-in
          paths: { '@/*': ['./stand-ins/*.ts'] },
        },
        include: ['blocks/*.ts', 'stand-ins/**/*.ts'],
      },
      null,
      2,
    ),
  )
  const tsc = step('docs: tsc --strict', () =>
    spawnSync(process.execPath, [join(app, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app, '--pretty', 'false'], {
      cwd: app,
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    }),
  )
  if (tsc.status !== 0) {
    const out = `${tsc.stdout}${tsc.stderr}`
      .split('\n')
      .filter(Boolean)
      .map((line) => {
        const m = /^blocks\/([^.]+)\.ts\((\d+),(\d+)\): (.*)$/.exec(line)
        if (m === null) return line
        const b = byModule.get(m[1])
        const inBlock = Number(m[2]) - b.offset
        const blockLines = b.code.split('\n').length
        const place =
          inBlock >= 1 && inBlock <= blockLines
            ? `${b.file}:${b.line + inBlock - 1}:${m[3]}`
            : `${b.file}:${b.line - 1} (in the context EXAMPLES['${b.key}'] declares)`
        return `${place} (${b.spec.kind}, code block ${b.n}): ${m[4]}`
      })
    fail(`the docs' examples do not compile (tsc --strict against the packed packages):\n  ${out.join('\n  ')}`)
  }

  // Run the runnable ones on embedded PGlite, then the shell walk-throughs that follow them.
  const env = { ...process.env, NODE_OPTIONS: '', npm_config_yes: 'false' }
  const ran = []
  for (const b of compiled.filter((x) => x.spec.kind === 'run' || x.spec.run === true)) {
    const r = step(`docs: run ${b.key}`, () =>
      spawnSync(process.execPath, [join('out', 'blocks', `${b.module}.js`)], { cwd: app, env, encoding: 'utf8', timeout: 120_000 }),
    )
    if (r.status !== 0) fail(`${b.where} (run on embedded PGlite) exited ${r.status ?? r.signal}:\n${r.stdout}${r.stderr}`)
    if (b.spec.expect !== undefined && !b.spec.expect.test(r.stdout))
      fail(`${b.where} (run on embedded PGlite) printed ${JSON.stringify(r.stdout)}, expected ${b.spec.expect}`)
    ran.push(b.key)
    for (const s of blocks.filter((x) => x.kind === 'shell' && x.spec.kind === 'run' && x.spec.after === b.key)) {
      let session
      for (const line of s.code.split('\n').map((l) => l.trim())) {
        if (line === '' || line.startsWith('#') || (s.spec.skipLines ?? []).some((re) => re.test(line))) continue
        const command = line.replace(/\s+#.*$/, '')
        if (command.includes('<session>') && session === undefined) fail(`${s.where}: no session id printed before \`${command}\``)
        const resolved = command.replace('<session>', session ?? '')
        const out = step(`docs: ${resolved.slice(0, 40)}`, () =>
          spawnSync('sh', ['-c', resolved], { cwd: app, env, encoding: 'utf8', timeout: 120_000 }),
        )
        if (out.status !== 0) fail(`${s.where}: \`${resolved}\` exited ${out.status ?? out.signal}:\n${out.stdout}${out.stderr}`)
        session ??= /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/.exec(out.stdout)?.[0]
        ran.push(`${s.key}: ${resolved}`)
      }
    }
  }
  const count = (kind) => compiled.filter((b) => b.spec.kind === kind).length
  return [
    `docs examples: ${compiled.length} code blocks compiled (${count('run')} complete and run, ${count('compile')} complete, ${count('excerpt')} excerpts with a declared context), ${blocks.filter((b) => b.kind === 'code' && b.spec.kind === 'skip').length} skipped with a reason`,
    `docs examples: installed as the docs say: ${installLines.join('; ')}`,
    ...ran.map((r) => `docs examples: ran ${r}`),
  ]
}

// Alone: pack the public packages (after the build) and run the check.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const root = realpathSync(fileURLToPath(new URL('..', import.meta.url)))
  const scratch = []
  const cleanUp = () => {
    if (process.env.TURNLOG_KEEP_PACKAGING_APP !== '1') for (const d of scratch) rmSync(d, { recursive: true, force: true })
  }
  const fail = (message) => {
    console.error(`docs examples: FAIL: ${message}`)
    cleanUp()
    process.exit(1)
  }
  const run = (cmd, args, options = {}) => {
    const r = spawnSync(cmd, args, { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, ...options })
    if (r.status !== 0) fail(`${cmd} ${args.join(' ')} exited ${r.status ?? r.signal}\n${r.stdout ?? ''}${r.stderr ?? ''}`)
    return r.stdout
  }
  const timings = []
  const step = (name, fn) => {
    const t0 = Date.now()
    const result = fn()
    timings.push(`${name} ${((Date.now() - t0) / 1000).toFixed(1)} s`)
    return result
  }
  const packages = readdirSync(join(root, 'packages'))
    .map((dir) => JSON.parse(readFileSync(join(root, 'packages', dir, 'package.json'), 'utf8')))
    .filter((j) => j.private !== true)
  const packDir = mkdtempSync(join(tmpdir(), 'turnlog-pack-'))
  scratch.push(packDir)
  step('pack', () =>
    run('npx', ['-y', 'pnpm@12.4.2', '-r', ...packages.flatMap((p) => ['--filter', p.name]), 'pack', '--pack-destination', packDir], {
      cwd: root,
    }),
  )
  const tarballs = new Map(packages.map((p) => [p.name, join(packDir, `${p.name.replace('@', '').replace('/', '-')}-${p.version}.tgz`)]))
  const lines = testDocExamples({
    root,
    tarballs,
    publicNames: packages.map((p) => p.name),
    version: workspaceVersion(root),
    step,
    run,
    fail,
    scratch,
  })
  for (const l of lines) console.log(l)
  console.log(`docs examples: steps: ${timings.join('; ')}`)
  console.log('docs examples: PASS')
  cleanUp()
}

/** `name` → the version the workspace installed (the root's, else a package's), or undefined. */
export function workspaceVersion(root) {
  return (name) => {
    for (const dir of ['.', ...readdirSync(join(root, 'packages')).map((d) => join('packages', d))]) {
      const f = join(root, dir, 'node_modules', name, 'package.json')
      if (existsSync(f)) return JSON.parse(readFileSync(f, 'utf8')).version
    }
    return undefined
  }
}
