/**
 * A fork's inherited live list is judged like its parent's: a compaction summary the parent placed,
 * which the fork inherited as a plain copy (`data.inheritedFrom`, no mark of the compaction), still
 * ends a run of user messages ("A placed compaction summary ends a run", audit.md). Regression for the
 * adversarial finding D4: a healthy fork that inherited a user-role summary got
 * `consecutive_user_messages`, which its parent, with the same live list, did not.
 */
import { describe, expect, it } from '@jest/globals'
import { createMessage, toWire, type Message, type SessionId } from '@turnlog/core'
import type { PostgresStore } from '@turnlog/postgres'
import { useTestStore } from '@turnlog/testing'
import { audit, type Finding } from '@turnlog/audit'

let store: PostgresStore
useTestStore((opened) => ({ store } = opened))

const user = (content: string): Message => createMessage({ role: 'user', content })
const assistant = (content: string): Message => createMessage({ role: 'assistant', content })
const kinds = (findings: readonly Finding[]): string[] => findings.map((f) => `${f.severity} ${f.kind}`)

/** q1, a1, q2, a2, then q1/a1 compacted into a user-role summary: live [summary, q2, a2]. */
async function compactedParent(): Promise<{ parent: SessionId; messages: Message[]; summary: Message }> {
  const parent = await store.createSession()
  const messages = [user('q1'), assistant('a1'), user('q2'), assistant('a2')]
  await store.append(parent, messages)
  const summary = user('[summary] q1/a1')
  await store.compact(parent, { covered: [messages[0]!.id, messages[1]!.id], summary })
  return { parent, messages, summary }
}

const liveContents = async (s: string): Promise<unknown[]> =>
  (await store.load(s)).messages.map((m) => (m.payload as { content: unknown }).content)

describe('audit of a fork that inherited a compaction summary (D4)', () => {
  it('finds no consecutive_user_messages in the fork when there is none in the parent', async () => {
    // given
    const { parent, messages } = await compactedParent()
    const fork = await store.fork(parent, { at: messages[3]!.id })
    expect(await liveContents(fork)).toEqual(await liveContents(parent))

    // when
    const [ofParent, ofFork] = await Promise.all([audit(store, parent), audit(store, fork)])

    // then
    expect(kinds(ofParent.findings)).toEqual([])
    expect(kinds(ofFork.findings)).toEqual([])
  })

  it("finds none in a fork of a fork (the summary placed two sessions up), nor against the fork's own transcript", async () => {
    // given
    const { parent, messages } = await compactedParent()
    const fork = await store.fork(parent, { at: messages[3]!.id })
    const grandchild = await store.fork(fork, { at: messages[3]!.id })

    // when
    const report = await audit(store, grandchild, { transcript: toWire((await store.load(grandchild)).messages) })

    // then
    expect(kinds(report.findings)).toEqual([])
  })

  it('still reports a run of user messages the fork wrote after its inherited summary', async () => {
    // given: the fork's own q3, q3 again (no reply between them)
    const { parent, messages, summary } = await compactedParent()
    const fork = await store.fork(parent, { at: messages[3]!.id })
    const [q3, again] = [user('q3'), user('q3, are you there?')]
    await store.append(fork, [q3, again])

    // when
    const report = await audit(store, fork)

    // then: one run, the fork's own messages, not the summary
    expect(kinds(report.findings)).toEqual(['warning consecutive_user_messages'])
    expect(report.findings[0]?.messageIds).toEqual([q3.id, again.id])
    expect(report.findings[0]?.messageIds).not.toContain(summary.id)
  })

  it('reports the run an inherited plain user message starts, as in the parent', async () => {
    // given: a parent whose last live message is a user message without a reply (no compaction involved)
    const parent = await store.createSession()
    const [q1, a1, q2] = [user('q1'), assistant('a1'), user('q2')]
    await store.append(parent, [q1, a1, q2])
    const fork = await store.fork(parent, { at: q2.id })
    const q3 = user('q3')
    await store.append(fork, [q3])

    // when
    const report = await audit(store, fork)

    // then
    expect(kinds(report.findings)).toEqual(['warning consecutive_user_messages'])
    expect(report.findings[0]?.messageIds).toEqual([q2.id, q3.id])
  })
})
