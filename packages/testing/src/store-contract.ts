/**
 * The {@link SessionStore} contract suite: one set of Jest `describe` blocks that every store
 * implementation must pass (Postgres and embedded PGlite run it today).
 * @packageDocumentation
 */
import { afterAll, beforeAll, describe } from '@jest/globals'
import type { SessionStore } from '@turnlog/core'
import type { ContractContext, OpenContractStore, OpenedStore } from './store-contract/contract-helpers.js'
import { describeAppendContract } from './store-contract/describe-append-contract.js'
import { describeFormatsContract } from './store-contract/describe-formats-contract.js'
import { describeFlushContract } from './store-contract/describe-flush-contract.js'
import { describeLiveListContract } from './store-contract/describe-live-list-contract.js'
import { describeLifecycleContract } from './store-contract/describe-lifecycle-contract.js'
import { describeOperationsContract } from './store-contract/describe-operations-contract.js'
import { describeReadContract } from './store-contract/describe-read-contract.js'
import { describeRegressionContract } from './store-contract/describe-regression-contract.js'
import { describeSyncContract } from './store-contract/describe-sync-contract.js'
import { describeTranscriptContract } from './store-contract/describe-transcript-contract.js'

export type { ContractContext, OpenContractStore, OpenedStore } from './store-contract/contract-helpers.js'

/** Tuning of {@link describeStoreContract}. */
export interface StoreContractOptions {
  /** fast-check runs of the lossless payload round trip; default 40. */
  readonly roundTripRuns?: number
  /** Timeout of the `beforeAll` that opens the store, ms; default 60,000. */
  readonly openTimeoutMs?: number
}

/**
 * Defines the full {@link SessionStore} contract as Jest `describe` blocks under `name`: append
 * (versions, idempotency, lost acknowledgements, conflicts and their evidence, atomicity, optimistic
 * concurrency, input errors), flush, sync, reads and paging, the lossless round trip, rewind, compact,
 * revise, streaming, fork, time travel, transcript and pairing, rebuild, close, identical copies in one
 * call, keeping the caller's live list in step, scoped external ids, and one regression test
 * per incident class of the domain brief.
 *
 * `open` is called once in `beforeAll` for the main store, and again whenever a test needs another
 * process's view: each call must return a NEW store instance (own caches) over the SAME database.
 * Every test works in sessions of its own, so the database may be shared with other files' data.
 */
export function describeStoreContract(name: string, open: OpenContractStore, options: StoreContractOptions = {}): void {
  describe(`${name}: SessionStore contract`, () => {
    let main: OpenedStore | undefined
    const extra: OpenedStore[] = []

    beforeAll(async () => {
      main = await open()
    }, options.openTimeoutMs ?? 60_000)

    afterAll(async () => {
      for (const opened of extra.splice(0).reverse()) await opened.close()
      await main?.close()
    })

    const ctx: ContractContext = {
      store(): SessionStore {
        if (!main) throw new Error('the contract store is not open (did beforeAll fail?)')
        return main.store
      },
      async reopen(): Promise<SessionStore> {
        const opened = await open()
        extra.push(opened)
        return opened.store
      },
      open,
    }

    describeAppendContract(ctx)
    describeFlushContract(ctx)
    describeSyncContract(ctx)
    describeLiveListContract(ctx)
    describeReadContract(ctx, { roundTripRuns: options.roundTripRuns ?? 40 })
    describeOperationsContract(ctx)
    describeTranscriptContract(ctx)
    describeFormatsContract(ctx, { roundTripRuns: options.roundTripRuns ?? 40 })
    describeLifecycleContract(ctx)
    describeRegressionContract(ctx)
  })
}
