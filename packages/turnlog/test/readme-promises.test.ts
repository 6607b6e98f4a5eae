/**
 * packages/turnlog/README.md and packages/postgres/README.md, what they promise about installing: `pg`
 * is an optional peer of the umbrella and of `@turnlog/postgres` (not needed for `{ embedded: true }`),
 * installing `turnlog` installs it all the same as a dependency of `@turnlog/cli`, whose executable the
 * umbrella carries; `@types/pg` is a dependency of `@turnlog/postgres` (its options name `pg.Pool`).
 */
import { describe, expect, it } from '@jest/globals'
import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

interface PackageJson {
  readonly name: string
  readonly bin?: Record<string, string>
  readonly dependencies?: Record<string, string>
  readonly peerDependencies?: Record<string, string>
  readonly peerDependenciesMeta?: Record<string, { optional?: boolean }>
}

const manifest = (dir: string): PackageJson =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../../${dir}/package.json`, import.meta.url)), 'utf8')) as PackageJson

describe('the READMEs of turnlog and @turnlog/postgres: pg and its types', () => {
  it('"pg is an optional peer dependency … installing turnlog installs it, as a dependency of @turnlog/cli"', () => {
    const umbrella = manifest('turnlog')
    const cli = manifest('cli')
    const postgres = manifest('postgres')

    for (const pkg of [umbrella, postgres]) {
      expect([pkg.name, pkg.peerDependencies?.['pg'] !== undefined, pkg.peerDependenciesMeta?.['pg']?.optional]).toEqual([
        pkg.name,
        true,
        true,
      ])
      expect([pkg.name, pkg.dependencies?.['pg']]).toEqual([pkg.name, undefined])
    }
    expect(umbrella.dependencies?.[cli.name]).toBeDefined()
    expect(cli.dependencies?.['pg']).toBeDefined()
    expect(umbrella.bin?.['turnlog']).toBe('./dist/bin.js')
  })

  it('"Its type declarations (@types/pg) are a dependency" of @turnlog/postgres', () => {
    expect(manifest('postgres').dependencies?.['@types/pg']).toBeDefined()
  })
})
