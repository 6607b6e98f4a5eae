import type { SessionStore } from '@turnlog/core'

/** Counts every session by paging through `store.sessions()` (for a progress bar's total). */
export async function countSessions(store: SessionStore): Promise<number> {
  let total = 0
  let after: string | undefined
  for (;;) {
    const page = await store.sessions({ limit: 1000, ...(after === undefined ? {} : { after }) })
    total += page.sessions.length
    if (page.next === null) return total
    after = page.next
  }
}
