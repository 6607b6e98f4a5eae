import type { BenchContext } from './bench-context.js'
import { sessionUuid } from './session-uuid.js'
import { generateSession, type GeneratedSession } from './workload.js'

/**
 * The sessions the import workload exports when `append` did not run (`--only import`): run 0's first
 * 100 generated sessions, appended to the bench's store untimed, under the ids `append` gives them.
 */
export async function seedImportSessions(ctx: BenchContext): Promise<GeneratedSession[][]> {
  const { args, store } = ctx
  const sessions = Array.from({ length: Math.min(args.sessions, 100) }, (_, i) => generateSession(1, i, args.messages))
  for (const s of sessions) {
    const id = sessionUuid(0, s.index)
    await store.createSession({ id })
    for (const turn of s.turns) await store.append(id, turn)
  }
  return [sessions]
}
