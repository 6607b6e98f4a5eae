/** Runs `tasks` in an order that rotates with `run`, so no contender always goes first. */
export async function interleaved(run: number, tasks: readonly (() => Promise<void>)[]): Promise<void> {
  for (let i = 0; i < tasks.length; i++) await (tasks[(run + i) % tasks.length] as () => Promise<void>)()
}
