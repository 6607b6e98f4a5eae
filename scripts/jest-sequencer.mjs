// Jest's test sequencer for this workspace: the longest test files start first, so the run does not end
// with one worker busy on a long file while the other idles. Jest's own sequencer orders by the durations
// of earlier runs in its cache, which a fresh clone (CI) does not have: it falls back to file size. Here
// the durations come from `scripts/test-durations.json` (seconds per file, from a full run; refresh it
// with `node scripts/test-durations.mjs <jest output>`), and a file it does not list counts as 10 s.
import { readFileSync } from 'node:fs'
import { relative } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
const durations = JSON.parse(readFileSync(new URL('./test-durations.json', import.meta.url), 'utf8'))
const UNLISTED_SECONDS = 10

/** Orders test files by their recorded duration, longest first (a path breaks ties, so the order is stable). */
export default class DurationSequencer {
  /** Jest's hook: the order in which the files are handed to the workers. */
  sort(tests) {
    const seconds = (test) => durations[relative(root, test.path)] ?? UNLISTED_SECONDS
    return [...tests].sort((a, b) => seconds(b) - seconds(a) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  }

  /**
   * Jest's hook for `--shard=i/n`: the files split into n shares of about equal recorded time (each file,
   * longest first, to the share with the least so far; ties by path, so every shard run agrees).
   */
  shard(tests, { shardIndex, shardCount }) {
    const totals = new Array(shardCount).fill(0)
    const mine = []
    for (const test of this.sort(tests)) {
      const share = totals.indexOf(Math.min(...totals))
      totals[share] += durations[relative(root, test.path)] ?? UNLISTED_SECONDS
      if (share === shardIndex - 1) mine.push(test)
    }
    return mine
  }

  /** Jest's hook after a run: nothing is cached (the durations file is the record). */
  cacheResults() {}
}
