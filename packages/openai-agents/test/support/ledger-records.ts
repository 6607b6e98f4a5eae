/**
 * The records an operation ledger holds in its log. Each record is retracted from the ledger's live
 * list in the transaction that writes it (`HistoryLedger`), so the log, not `load`, shows what was recorded.
 * @packageDocumentation
 */
import type { SessionStore } from '@turnlog/core'
import type { LedgerRecord } from '@turnlog/openai-agents'

/** Every record appended to the ledger `ledgerSessionId`, live or retracted, in log order. */
export async function ledgerRecords(store: SessionStore, ledgerSessionId: string): Promise<LedgerRecord[]> {
  const out: LedgerRecord[] = []
  for await (const event of store.events(ledgerSessionId)) {
    if (event.type === 'message_appended') out.push(event.payload as unknown as LedgerRecord)
  }
  return out
}
