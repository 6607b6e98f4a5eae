import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const read = (path: string): string => readFileSync(fileURLToPath(new URL(`../../../${path}`, import.meta.url)), 'utf8')

/** The text of `async function runTurn(` up to its closing brace at the same indentation, dedented. */
function runTurnOf(text: string): string {
  const start = text.indexOf('async function runTurn(')
  if (start < 0) throw new Error('no runTurn in the text')
  const lineStart = text.lastIndexOf('\n', start) + 1
  const indent = text.slice(lineStart, start)
  const end = text.indexOf(`\n${indent}}\n`, start)
  return text
    .slice(lineStart, end + indent.length + 2)
    .split('\n')
    .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line).trimEnd())
    .join('\n')
}

describe('docs/integrating.md', () => {
  it("the agent loop the contract suite runs (with a redelivery, on Postgres and PGlite) is the docs' loop, character for character", () => {
    const doc = runTurnOf(read('docs/integrating.md'))
    const tested = runTurnOf(read('packages/testing/src/store-contract/describe-live-list-contract.ts'))
    expect(tested).toBe(doc)
  })
})
