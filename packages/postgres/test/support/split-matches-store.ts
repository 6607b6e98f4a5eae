import { expect } from '@jest/globals'
import { isTurnlogError, type Message } from '@turnlog/core'
import { openStore, splitByBatchBytes } from '@turnlog/postgres'
import { caught } from '@turnlog/testing'

/**
 * Checks that core's `splitByBatchBytes` counts `messages` (two of them) exactly as the store's batch
 * limit does: each one's size is read from the store's refusal at a 1-byte `maxBatchBytes`; at their
 * total the split is one run and the store takes the pair, one code unit below it two runs and the
 * store refuses (`BATCH_TOO_LARGE`). Opens its own stores on `connectionString`, closed at the end.
 */
export async function expectSplitMatchesStore(connectionString: string, messages: readonly [Message, Message]): Promise<void> {
  const tiny = await openStore({ connectionString, maxBatchBytes: 1 })
  let sizes: number[]
  try {
    const sessionId = await tiny.createSession()
    sizes = await Promise.all(
      messages.map(async (m) => ((await caught(tiny.append(sessionId, [m]))) as { details: { size: number } }).details.size),
    )
  } finally {
    await tiny.close()
  }
  const total = (sizes[0] as number) + (sizes[1] as number)

  // one run at exactly the total, two runs one code unit below it
  expect(splitByBatchBytes(messages, total)).toHaveLength(1)
  expect(splitByBatchBytes(messages, total - 1)).toHaveLength(2)
  // and the store agrees: it takes the pair at the total and refuses it one code unit below
  const exact = await openStore({ connectionString, maxBatchBytes: total })
  const below = await openStore({ connectionString, maxBatchBytes: total - 1 })
  try {
    expect(isTurnlogError(await caught(below.append(await below.createSession(), messages)), 'BATCH_TOO_LARGE')).toBe(true)
    expect((await exact.append(await exact.createSession(), messages)).appended).toHaveLength(2)
  } finally {
    await exact.close()
    await below.close()
  }
}
