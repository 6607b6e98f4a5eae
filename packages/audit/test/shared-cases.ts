/**
 * Test cases the audit must pass on Postgres and on embedded PGlite alike, registered by both files.
 */
import { expect, it } from '@jest/globals'
import type { PostgresStore } from '@turnlog/postgres'
import { audit } from '@turnlog/audit'
import { seedRealisticSession } from './audit-fixtures.js'

/** Registers the redaction case: a redacted tool call and its result leave a session and its fork clean. */
export function itFindsNothingAfterARedaction(getStore: () => PostgresStore): void {
  it('finds nothing after a redaction erased a tool call and its result in a session and its fork', async () => {
    // given: the placeholders keep the pairing ids, the chain covers the digests
    const store = getStore()
    const { sessionId, forkId, live } = await seedRealisticSession(store)
    const call = live.find((m) => m.payload.tool_calls?.some((c) => c.id === 'call_05'))
    const result = live.find((m) => m.payload.tool_call_id === 'call_05')
    if (!call || !result) throw new Error('fixture changed')
    await store.redact(sessionId, call.id)
    await store.redact(forkId, result.id)

    // when
    const main = await audit(store, sessionId, { live })
    const fork = await audit(store, forkId)

    // then
    expect(main.findings).toEqual([])
    expect(fork.findings).toEqual([])
  })
}
