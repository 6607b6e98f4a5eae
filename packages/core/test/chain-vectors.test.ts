/**
 * The TypeScript chain link (the independent verifier) against the golden vectors that the SQL
 * `turnlog.chain_link` is pinned to as well (packages/postgres/test/chain-link.int.test.ts).
 */
import { readFileSync } from 'node:fs'
import { describe, expect, it } from '@jest/globals'
import { GENESIS_HASH, chainHash, type ChainInput } from '../src/index.js'

/** The golden vectors file (shared with the SQL test). */
interface ChainVectors {
  readonly genesis: string
  readonly vectors: readonly { readonly name: string; readonly prev: string; readonly input: ChainInput; readonly link: string }[]
}

const VECTORS = JSON.parse(readFileSync(new URL('./chain-vectors.json', import.meta.url), 'utf8')) as ChainVectors

describe('chain link golden vectors (TypeScript)', () => {
  it("the genesis is the vectors' genesis", () => {
    expect(GENESIS_HASH).toBe(VECTORS.genesis)
  })

  it.each(VECTORS.vectors.map((v) => [v.name, v] as const))('%s', (_name, v) => {
    // when the link is computed from the vector's inputs
    const link = chainHash(v.prev, v.input)
    // then it is the golden one
    expect(link).toBe(v.link)
  })

  it('the vectors tell their inputs apart (each field changes the link)', () => {
    const links = VECTORS.vectors.map((v) => v.link)
    expect(new Set(links).size).toBe(links.length)
  })
})
