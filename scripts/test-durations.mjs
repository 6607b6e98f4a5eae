#!/usr/bin/env node
// Refreshes scripts/test-durations.json (read by scripts/jest-sequencer.mjs) from the output of a full
// jest run: `pnpm jest 2>&1 | tee jest.log; node scripts/test-durations.mjs jest.log`. Jest prints a
// file's time only when it took 5 s or more; the others are recorded as 2 s. Better: the report of
// `pnpm jest --json --outputFile=jest.json` (a name ending in .json), which has every file's time.
import { readFileSync, writeFileSync } from 'node:fs'

const file = process.argv[2]
if (file === undefined) {
  console.error('usage: node scripts/test-durations.mjs <jest output file>')
  process.exit(2)
}
const durations = {}
if (file.endsWith('.json')) {
  const root = new URL('..', import.meta.url).pathname
  for (const t of JSON.parse(readFileSync(file, 'utf8')).testResults)
    durations[t.name.replace(root, '')] = Math.round((t.endTime - t.startTime) / 100) / 10
} else {
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = /^(?:PASS|FAIL) (?:unit|int|prop) (\S+)(?: \(([0-9.]+) s\))?/.exec(line)
    if (m) durations[m[1]] = m[2] === undefined ? 2 : Math.round(Number(m[2]) * 10) / 10
  }
}
const sorted = Object.fromEntries(Object.entries(durations).sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)))
writeFileSync(new URL('./test-durations.json', import.meta.url), `${JSON.stringify(sorted, null, 2)}\n`)
console.log(`test durations: ${Object.keys(sorted).length} files`)
