/**
 * Attacks an export file's lines that no chain link covers, and the completeness of a file checked
 * offline (audit.md, "Export and import"; operations.md, "Verified before writing").
 *
 * - A fork's session line names its parent, the parent's version and the fork point; no link covers
 *   the session line, but the link of seq 1, the fork's `session_forked` event, covers the same three
 *   values. Regression: a file edited to move the fork point (`parent.version`, `parent.at`), to make a
 *   fork a root or a root a fork imported as written (the target's `sessions` listed a fork point the
 *   log contradicts) and neither `verifyExport` nor the audit of the copy found anything. Both now
 *   refuse it: `IMPORT_FAILED`, `details.reason: 'lineage_mismatch'`, nothing of that session written.
 * - `verifyExport` checked each session's chain but not the file: a file cut at a session boundary, a
 *   file without its end line, an end line with other counts, a session repeated, content after the
 *   end line and an empty input all passed as verified (`ok` for every session, or no session at
 *   all) while `importEvents` refuses every one of them. It now throws the import's `IMPORT_FAILED`.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals'
import { createMessage, isTurnlogError, type SessionId } from '@turnlog/core'
import { openStore, type PostgresStore } from '@turnlog/postgres'
import { createTestDatabase, type TestDatabase } from '@turnlog/testing'
import { audit, exportSessions, importEvents, verifyExport } from '@turnlog/audit'

let dbSource: TestDatabase
let dbTarget: TestDatabase
let source: PostgresStore
let target: PostgresStore
let root: SessionId
let fork: SessionId
/** The file: header, root's session line and events, fork's session line and events, end line. */
let lines: string[]
/** 0-based index of the fork's session line. */
let forkLine: number

async function collect(iterable: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = []
  for await (const line of iterable) out.push(line)
  return out
}

/** `lines` with the record at `index` rewritten by `edit`. */
function editLine(index: number, edit: (record: Record<string, unknown>) => Record<string, unknown>): string[] {
  return lines.map((l, i) => (i === index ? JSON.stringify(edit(JSON.parse(l) as Record<string, unknown>)) : l))
}

async function outcome(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
    return 'resolved'
  } catch (error) {
    return isTurnlogError(error) ? { code: error.code, details: error.details } : error
  }
}

beforeAll(async () => {
  ;[dbSource, dbTarget] = await Promise.all([createTestDatabase(), createTestDatabase()])
  source = await openStore({ connectionString: dbSource.connectionString })
  target = await openStore({ connectionString: dbTarget.connectionString })
  root = await source.createSession({ metadata: { title: 'root' } })
  const q = createMessage({ role: 'user', content: 'q1' })
  const a = createMessage({ role: 'assistant', content: 'a1' })
  await source.append(root, [q, a, createMessage({ role: 'user', content: 'q2' }), createMessage({ role: 'assistant', content: 'a2' })])
  fork = await source.fork(root, { at: a.id })
  await source.append(fork, [createMessage({ role: 'user', content: 'branch' })])
  // root first, then the fork (the export's order is the session id's, and the fork's id is later)
  lines = await collect(exportSessions(source, { sessionIds: [root, fork] }))
  forkLine = lines.findIndex((l) => l.includes('"kind":"session"') && l.includes(fork))
})

afterAll(async () => {
  await Promise.all([source.close(), target.close()])
  await Promise.all([dbSource.drop(), dbTarget.drop()])
})

describe("a fork's session line must name the parent its chained session_forked event names", () => {
  it('the file has the layout the cases assume, and imports and verifies untouched', async () => {
    const parent = (JSON.parse(lines[forkLine] as string) as { parent: { sessionId: string; version: number } }).parent
    expect(parent).toMatchObject({ sessionId: root, version: 4 })
    expect(JSON.parse(lines[forkLine + 1] as string)).toMatchObject({ seq: 1, type: 'session_forked' })
    expect((await verifyExport(lines)).map((v) => v.ok)).toEqual([true, true])
  })

  it.each([
    [
      'the fork point moved to another version',
      (r: Record<string, unknown>) => ({ ...r, parent: { ...(r['parent'] as object), version: 2 } }),
    ],
    [
      'the fork point moved to another message',
      (r: Record<string, unknown>) => ({ ...r, parent: { ...(r['parent'] as object), at: '01a00000-0000-7000-8000-000000000001' } }),
    ],
    [
      'another parent session',
      (r: Record<string, unknown>) => ({ ...r, parent: { ...(r['parent'] as object), sessionId: '01a00000-0000-7000-8000-000000000002' } }),
    ],
  ])(
    'refuses a session line whose parent was edited (%s), naming the session_forked line; nothing of the fork is written',
    async (_what, edit) => {
      // given
      const tampered = editLine(forkLine, edit)

      // when
      const imported = await outcome(() => importEvents(target, tampered))
      const offline = await outcome(() => verifyExport(tampered))

      // then
      const expected = { code: 'IMPORT_FAILED', details: { line: forkLine + 2, sessionId: fork, seq: 1, reason: 'lineage_mismatch' } }
      expect(imported).toEqual(expected)
      expect(offline).toEqual(expected)
      await expect(target.getSession(fork)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
      // the session before it is complete and committed (audit.md, "Unit of work")
      expect((await target.getSession(root)).version).toBe(4)
    },
  )

  it('refuses a fork turned into a root (parent: null) and a root turned into a fork', async () => {
    // given
    const orphaned = editLine(forkLine, (r) => ({ ...r, parent: null }))
    const adopted = editLine(1, (r) => ({ ...r, parent: { sessionId: fork, version: 1, at: '01a00000-0000-7000-8000-000000000001' } }))

    // when / then: the fork's seq 1 is a session_forked event no parent explains
    const lineageAt = (line: number, sessionId: string) => ({
      code: 'IMPORT_FAILED',
      details: { line, sessionId, seq: 1, reason: 'lineage_mismatch' },
    })
    expect(await outcome(() => verifyExport(orphaned))).toEqual(lineageAt(forkLine + 2, fork))
    expect(await outcome(() => importEvents(target, orphaned))).toEqual(lineageAt(forkLine + 2, fork))
    await expect(target.getSession(fork)).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' })
    // the root's seq 1 is a message, not the session_forked event a fork begins with
    expect(await outcome(() => verifyExport(adopted))).toEqual(lineageAt(3, root))
    const fresh = await createTestDatabase()
    const store = await openStore({ connectionString: fresh.connectionString })
    try {
      expect(await outcome(() => importEvents(store, adopted))).toEqual(lineageAt(3, root))
      expect((await store.sessions()).sessions).toEqual([])
    } finally {
      await store.close()
      await fresh.drop()
    }
  })

  it("the untouched file still imports the fork after the refusals, with the source's lineage", async () => {
    // when
    const result = await importEvents(target, lines)

    // then
    expect(result.sessionIds).toEqual([root, fork])
    expect((await target.getSession(fork)).parent).toEqual((await source.getSession(fork)).parent)
  })
})

describe('verifyExport checks the file, not only each chain', () => {
  // the file and the line of the refusal (lines are known once beforeAll ran)
  it.each<[string, () => [string[], number], string]>([
    ['a file cut at a session boundary', () => [lines.slice(0, forkLine), forkLine + 1], 'without its end line'],
    ['a file without its end line', () => [lines.slice(0, -1), lines.length], 'without its end line'],
    [
      'an end line with other counts',
      () => [[...lines.slice(0, -1), JSON.stringify({ kind: 'end', sessions: 2, events: 99 })], lines.length],
      'the end line counts',
    ],
    ['content after the end line', () => [[...lines, lines[1] as string], lines.length + 1], 'after the end line'],
    [
      'a session repeated',
      () => [[...lines.slice(0, forkLine), ...lines.slice(1, forkLine), ...lines.slice(forkLine)], forkLine + 1],
      'appears twice',
    ],
    ['an empty input', () => [[], 1], 'no header line'],
  ])('%s: IMPORT_FAILED naming the line, as importEvents refuses it', async (_what, make, says) => {
    // given
    const [file, line] = make()

    // when
    const offline = await verifyExport(file).catch((e: unknown) => e)
    const imported = await importEvents(target, file).catch((e: unknown) => e)

    // then
    expect(isTurnlogError(offline, 'IMPORT_FAILED')).toBe(true)
    expect(offline).toMatchObject({ details: { line } })
    expect((offline as Error).message).toContain(says)
    expect(isTurnlogError(imported, 'IMPORT_FAILED')).toBe(true)
  })
})

describe('an export\'s message event lines as a transcript (audit.md, "Transcripts the audit accepts")', () => {
  it('are matched by their messageId: other content under a stored id is content_not_stored, not a lost turn', async () => {
    // given: the root's message lines, one of them with content the log never stored
    const rootEvents = lines.filter((l) => l.includes('"type":"message_appended"') && l.includes(root))
    const changed = rootEvents.map((l) => l.replace('"content":"a2"', '"content":"a2 (edited in the UI)"'))
    expect(changed).not.toEqual(rootEvents)
    const editedId = (JSON.parse(changed[3] as string) as { messageId: string }).messageId

    // when
    const clean = await audit(source, root, { transcript: rootEvents, checks: ['transcript'] })
    const report = await audit(source, root, { transcript: changed, checks: ['transcript'] })

    // then
    expect(clean.findings).toEqual([])
    expect(report.findings.map((f) => [f.kind, f.severity, f.messageIds, f.evidence?.['reason']])).toEqual([
      ['lost_turn', 'error', [editedId], 'content_not_stored'],
    ])
  })
})
