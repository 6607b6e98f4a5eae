import { randomInt } from 'node:crypto'
import { contentHash, createMessage, serializeMessage, type Message, type SessionId, type StoredEvent } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { CliError } from '../cli-error.js'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { shortId } from '../format-text.js'
import { openCliStore, type CliStore } from '../open-cli-store.js'
import { redactUrl } from '../resolve-database.js'
import { scoreRows } from './cursor-persister.js'
import { auditDemoSessions } from './audit-demo-sessions.js'
import { chooseDemoTarget } from './choose-demo-target.js'
import { assistant, call, toolResult, user } from './demo-messages.js'
import { DemoRuntime } from './demo-runtime.js'
import type { DemoStep, DemoSummary } from './demo-summary.js'
import { killWriterMidTurn } from './kill-writer-mid-turn.js'
import { renderDemoScore } from './render-demo-score.js'
import { scoreLog } from './score-log.js'

const ids = (list: readonly string[]): string => list.map(shortId).join(', ')

function sameList(a: readonly Message[], b: readonly Message[]): boolean {
  return a.length === b.length && a.every((m, i) => m.id === b[i]?.id && contentHash(m) === contentHash(b[i] as Message))
}

/**
 * `turnlog demo`: runs a scripted agent session through turnlog (every incident class of the domain
 * brief: parallel tool calls, a scaffolding rewind, a redelivery, a writer killed with SIGKILL
 * mid-turn, a compaction racing new messages, a revision, a streamed reply, a fork), prints the
 * timeline, replays and audits it, and runs the same script through a naive position-cursor persister
 * to show what that one loses and duplicates.
 */
export async function runDemo(ctx: CommandContext): Promise<ExitCode> {
  const started = Date.now()
  const { target, kept, cleanup } = await chooseDemoTarget(ctx)
  const steps: DemoStep[] = []
  const out = (line: string): void => {
    if (!ctx.json) ctx.io.out(`${line}\n`)
  }
  const step = (action: string, detail: string, version: number | null): void => {
    const s: DemoStep = { n: steps.length + 1, action, detail, version }
    steps.push(s)
    out(`${String(s.n).padStart(3)}  ${(version === null ? '' : `v${version}`).padEnd(4)}  ${action.padEnd(13)} ${detail}`)
  }
  const where =
    target.kind === 'postgres'
      ? `Postgres ${redactUrl(target.connectionString)}`
      : `embedded PGlite in ${target.dataDir}${kept ? '' : ' (temporary)'}`
  out(`turnlog demo: a scripted agent session on ${where}\n`)

  let opened: CliStore | undefined
  try {
    opened = await openCliStore(target, { create: true })
    let store: PostgresStore = opened.store
    const rt = new DemoRuntime()
    const ephemeralIds = new Set<string>()
    const flush = async (): Promise<{ version: number; appended: readonly string[]; duplicates: readonly string[] }> => {
      const result = await store.flush(S, rt.live)
      rt.noteFlushed()
      rt.cursor.flush(rt.naive)
      return result
    }

    const S: SessionId = await store.createSession({ metadata: { demo: true, title: 'acme repo assistant' } })
    out(`session ${S}\n`)

    // turn 1: a user question (an inbound platform message: its id derives from the platform's id)
    const system = rt.label(
      createMessage({ role: 'system', content: 'You are a coding assistant for the acme repository.' }),
      'the system prompt',
    )
    // a Slack-style message ts: unique per run, so demos can share a database
    const inboundId = `slack:T42:C7:${Math.floor(started / 1000)}.${String(randomInt(1_000_000)).padStart(6, '0')}`
    const u1 = rt.label(user("What's in README.md and package.json?", { externalId: inboundId }), 'turn 1 question')
    rt.push(system, u1)
    let r = await flush()
    step(
      'turn 1',
      `system ${shortId(system.id)} + user ${shortId(u1.id)} "What's in README.md and package.json?" (id derived from ${inboundId}): ${r.appended.length} appended`,
      r.version,
    )

    // two parallel tool calls, flushed before the tools run
    const a1 = rt.label(
      assistant({
        content: '',
        tool_calls: [call('call_readme', 'read_file', { path: 'README.md' }), call('call_pkg', 'read_file', { path: 'package.json' })],
        reasoning_content: 'Two independent reads: run them in parallel.',
        finish_reason: 'tool_calls',
      }),
      'turn 1 parallel tool calls',
    )
    rt.push(a1)
    r = await flush()
    step(
      'tool calls',
      `assistant ${shortId(a1.id)} calls read_file(README.md) ‖ read_file(package.json): flushed before the tools run`,
      r.version,
    )
    const t1 = rt.label(toolResult('call_readme', { ok: true, text: '# acme\nA tiny <b>demo</b> repository.' }), 'README.md result')
    const t2 = rt.label(
      toolResult('call_pkg', { ok: true, text: '{"name":"acme","version":"1.2.0","scripts":{"test":"node --test"}}' }),
      'package.json result',
    )
    rt.push(t1, t2)
    r = await flush()
    step(
      'tool results',
      `${shortId(t1.id)} ← call_readme, ${shortId(t2.id)} ← call_pkg: ${r.appended.length} appended, ${r.duplicates.length} already durable`,
      r.version,
    )
    const a1reply = rt.label(
      assistant({ content: 'README.md introduces acme; package.json names it acme@1.2.0 with one script, `test`.', finish_reason: 'stop' }),
      'turn 1 reply',
    )
    rt.push(a1reply)
    r = await flush()
    step(
      'reply',
      `assistant ${shortId(a1reply.id)}: ${r.appended.length} appended (the flush sent ${rt.live.length} messages, ${r.duplicates.length} known)`,
      r.version,
    )

    // the platform redelivers the inbound message after a 429: same platform id, same message id
    const redelivered = user("What's in README.md and package.json?", { externalId: inboundId })
    const dup = await store.append(S, [redelivered])
    rt.naive.push(redelivered) // the naive runtime cannot tell it from a new message
    rt.cursor.flush(rt.naive)
    step(
      'redelivery',
      `${inboundId} arrives again → id ${shortId(redelivered.id)} again: duplicate, stored once (${dup.appended.length} appended, ${dup.duplicates.length} duplicate)`,
      dup.version,
    )

    // turn 2: a tool call that never answers, a scaffolding nudge, and a rewind of the failed attempt
    const u2 = rt.label(user('Run the tests.'), 'turn 2 request')
    rt.push(u2)
    r = await flush()
    step('turn 2', `user ${shortId(u2.id)} "Run the tests.": ${r.appended.length} appended`, r.version)
    const a2failed = rt.label(
      assistant({ content: '', tool_calls: [call('call_tests_1', 'run_tests', {})], finish_reason: 'tool_calls' }),
      'the timed-out tool call',
    )
    rt.push(a2failed)
    r = await flush()
    step('tool call', `assistant ${shortId(a2failed.id)} calls run_tests(): flushed; the tool times out, no result`, r.version)
    const nudge = createMessage({ role: 'user', content: '(please continue)' }, { ephemeral: true })
    ephemeralIds.add(nudge.id)
    rt.push(nudge)
    r = await flush()
    step(
      'scaffolding',
      `runtime adds an ephemeral "please continue" nudge ${shortId(nudge.id)}: the flush skips it (${r.appended.length} appended)`,
      r.version,
    )
    const rewound = await store.rewind(S, { after: u2.id }, { reason: 'tool timed out: retry the turn' })
    rt.truncateAfter(u2)
    step(
      'rewind',
      `drop the failed attempt: the nudge (never stored) and the unanswered call ${ids(rewound.retracted)} retracted (kept in the log, out of the live list)`,
      rewound.version,
    )

    // the retry runs in a worker process that is killed with SIGKILL while the tool runs
    const a2 = rt.label(
      assistant({ content: '', tool_calls: [call('call_tests_2', 'run_tests', { timeout_s: 120 })], finish_reason: 'tool_calls' }),
      "the retry's tool call (flushed just before the kill)",
    )
    const t3 = rt.label(
      toolResult('call_tests_2', { ok: true, passed: 12, failed: 0, output: '12 passing (1.3 s)' }),
      "the retry's tool result",
    )
    const a2reply = rt.label(assistant({ content: 'All 12 tests pass.', finish_reason: 'stop' }), "the retry's reply")
    const turn = [...rt.live, a2, t3, a2reply]
    await opened.close()
    opened = undefined
    const killed = await killWriterMidTurn({
      target,
      sessionId: S,
      live: turn.map((m) => serializeMessage(m)),
      flushFirst: rt.live.length + 1,
    })
    // what the naive writer did in its process before the kill, and its restart
    rt.cursor.flush([...rt.naive, a2])
    rt.cursor = rt.cursor.resumeAfterCrash()
    step(
      'SIGKILL',
      `worker pid ${killed.report.pid} flushed the retry's call ${ids(killed.report.appended)} (v${killed.report.version}), then was killed with ${killed.signal} while run_tests ran`,
      killed.report.version,
    )
    opened = await openCliStore(target, { migrate: false, create: true })
    store = opened.store
    const recovered = await store.load(S)
    const survived = recovered.messages.some((m) => m.id === a2.id)
    if (!survived)
      throw new CliError('DEMO_FAILED', `the killed writer's committed flush (${a2.id}) is missing after reopening the database`)
    step(
      'reopen',
      target.kind === 'embedded'
        ? `the data dir reopens after SIGKILL: PGlite recovered it${opened.tookOverStaleLock ? ' (stale lock of the dead pid taken over)' : ''}; the killed writer's commit is there (v${recovered.version})`
        : `reconnected; the killed writer's commit is there (v${recovered.version})`,
      recovered.version,
    )
    rt.push(a2, t3, a2reply)
    r = await flush()
    step(
      'recovery',
      `flush of the full live list (${rt.live.length} messages): ${r.appended.length} appended (${ids(r.appended)}), ${r.duplicates.length} already durable: exactly once`,
      r.version,
    )

    // a compaction while new messages arrive: they stay live after the summary
    const covered = rt.live.slice(1, rt.live.indexOf(a2))
    step(
      'compaction',
      `starts: picks ${covered.length} messages to summarise [${ids(covered.map((m) => m.id))}]; the summary is slow`,
      null,
    )
    const u3 = rt.label(user('Bump the version to 1.2.1.'), 'turn 3 request (arrived during compaction)')
    rt.push(u3)
    r = await flush()
    const a3 = rt.label(
      assistant({ content: 'Done: package.json now says 1.2.1.', finish_reason: 'stop' }),
      'turn 3 reply (arrived during compaction)',
    )
    rt.push(a3)
    const r3 = await flush()
    step(
      'turn 3',
      `meanwhile user ${shortId(u3.id)} "Bump the version to 1.2.1." and reply ${shortId(a3.id)} arrive: ${r.appended.length + r3.appended.length} appended`,
      r3.version,
    )
    const summary = rt.label(
      user(
        '[CONTEXT COMPACTION] Earlier: the user asked what README.md and package.json hold (acme@1.2.0, one `test` script) and asked to run the tests.',
      ),
      'the compaction summary',
    )
    const compacted = await store.compact(S, { covered: covered.map((m) => m.id), summary, reason: 'context window at 80%' })
    rt.compact(covered, summary)
    r = await flush()
    const afterSummary = rt.live.slice(rt.live.indexOf(summary) + 1)
    step(
      'compaction',
      `done: summary ${ids(compacted.summary)} replaces ${covered.length} messages; the late turn (${shortId(u3.id)}, ${shortId(a3.id)}) is still live after it (${afterSummary.length} after the summary)`,
      compacted.version,
    )

    // a revision: the tool result gets an appended note (same id, new content)
    const t3note = createMessage(
      { ...t3.payload, content: `${String(t3.payload.content)}\n[note: output truncated to 4 KB by the runtime]` },
      { id: t3.id, createdAt: t3.createdAt },
    )
    const revised = await store.revise(S, t3.id, t3note.payload)
    rt.replace(t3note)
    r = await flush()
    step(
      'revision',
      `tool result ${shortId(t3.id)} gets an appended note: revision ${revised.revision}, the old bytes kept in the log`,
      revised.version,
    )

    // a streamed reply: written while partial, finalized with its full text
    const u4 = rt.label(user('Summarize what changed in one line.'), 'turn 4 request')
    rt.push(u4)
    await flush()
    const partial = rt.label(assistant({ content: 'Bumped acme to' }, { status: 'partial' }), 'the streamed reply')
    rt.push(partial)
    r = await flush()
    step('streaming', `user ${shortId(u4.id)}; assistant ${shortId(partial.id)} streams "Bumped acme to…": flushed as partial`, r.version)
    const more = await store.revise(S, partial.id, { role: 'assistant', content: 'Bumped acme to 1.2.1;' }, { status: 'partial' })
    rt.replace(assistant({ content: 'Bumped acme to 1.2.1;' }, { status: 'partial', id: partial.id, createdAt: partial.createdAt }))
    rt.cursor.flush(rt.naive)
    const finalPayload = { role: 'assistant', content: 'Bumped acme to 1.2.1; all 12 tests pass.', finish_reason: 'stop' } as const
    const finalized = await store.finalize(S, partial.id, finalPayload)
    rt.replace(createMessage(finalPayload, { id: partial.id, createdAt: partial.createdAt }))
    r = await flush()
    step(
      'finalize',
      `more tokens (v${more.version}), then the stream ends: ${shortId(partial.id)} final, revision ${finalized.revision}`,
      finalized.version,
    )

    // a fork: continue from the reply of turn 3 in a new session
    const F = await store.fork(S, { at: a3.id, metadata: { demo: true, title: 'what if: 2.0.0' } })
    const u5 = user('Actually, make it 2.0.0 instead.')
    const forkAppend = await store.append(F, [u5])
    const inherited = rt.live.indexOf(a3) + 1
    step(
      'fork',
      `new session ${F} continues from ${shortId(a3.id)}: inherits ${inherited} messages with their ids, then its own user ${shortId(u5.id)} (the fork is at v${forkAppend.version})`,
      null,
    )

    // replay and audit
    const loaded = await store.load(S)
    const liveMatches = sameList(
      loaded.messages,
      rt.live.filter((m) => m.ephemeral !== true),
    )
    const forkLoaded = await store.load(F)
    const forkExpected = [...rt.live.slice(0, rt.live.indexOf(a3) + 1), u5]
    const forkMatches = sameList(forkLoaded.messages, forkExpected)
    const events: StoredEvent[] = []
    for await (const e of store.events(S)) events.push(e)
    const score = scoreLog(events, rt.expected, ephemeralIds)
    step(
      'replay',
      `load(): ${loaded.messages.length} live messages at v${loaded.version}, ${liveMatches ? 'identical to' : 'DIFFERENT from'} the runtime's list; the fork: ${forkMatches ? 'as expected' : 'UNEXPECTED'}`,
      loaded.version,
    )
    const audit = await auditDemoSessions(store, [S, F], rt.live)
    step('audit', audit.summary, null)

    const naive = scoreRows(rt.cursor.rows, rt.expected)
    const summaryJson: DemoSummary = {
      database: { kind: target.kind, where: target.where, kept },
      sessionId: S,
      forkSessionId: F,
      steps,
      turnlog: { ...score, liveMatches, forkMatches, events: events.length, liveCount: loaded.messages.length },
      audit,
      cursorPersister: {
        ...naive,
        rows: rt.cursor.rows.length,
        resumeCount: rt.cursor.rows.length,
        correctLiveCount: loaded.messages.length,
      },
      labels: Object.fromEntries(rt.labels),
      ok:
        score.lost === 0 &&
        score.duplicated === 0 &&
        score.stale === 0 &&
        score.scaffoldingStored === 0 &&
        liveMatches &&
        forkMatches &&
        audit.ok,
      durationMs: Date.now() - started,
    }
    await opened.close()
    opened = undefined
    if (ctx.json) ctx.io.out(`${JSON.stringify(summaryJson)}\n`)
    else out(renderDemoScore(summaryJson))
    return summaryJson.ok ? EXIT_CODES.ok : EXIT_CODES.findings
  } finally {
    await opened?.close().catch(() => {})
    await cleanup().catch(() => {})
  }
}
