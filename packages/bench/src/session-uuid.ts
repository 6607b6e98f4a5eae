/** The session id of session `index` in run `run` (UUIDv7-shaped, deterministic). */
export function sessionUuid(run: number, index: number): string {
  const hex = (run * 1_000_000 + index).toString(16).padStart(12, '0')
  return `00000000-0000-7000-8000-${hex}`
}
