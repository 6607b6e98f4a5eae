/**
 * The baseline schema's `.sql` files: the manifest (SCHEMA_FILES) lists every file under `sql/` exactly
 * once, the files ship with the package, and no file holds a carriage return (a CRLF checkout would
 * silently change what the chain functions hash).
 */
import { readdirSync, readFileSync } from 'node:fs'
import { join, relative } from 'node:path'
import { fileURLToPath } from 'node:url'
import { describe, expect, it } from '@jest/globals'
import { SCHEMA_DIR, SCHEMA_FILES, schemaFile, schemaSql } from '../src/schema-sql.js'

const DIR = fileURLToPath(SCHEMA_DIR)

function sqlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sqlFiles(join(dir, e.name)) : e.name.endsWith('.sql') ? [relative(DIR, join(dir, e.name)).split('\\').join('/')] : [],
  )
}

describe('schema files', () => {
  it('the manifest lists every .sql file under sql/ exactly once, and nothing else', () => {
    // given the files on disk
    const onDisk = sqlFiles(DIR).sort()
    // then the manifest is the same set, without repeats
    expect(new Set(SCHEMA_FILES).size).toBe(SCHEMA_FILES.length)
    expect([...SCHEMA_FILES].sort()).toEqual(onDisk)
  })

  it('ship with the package (package.json files) and read from the same relative path in src/ and dist/', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { files: string[] }
    expect(pkg.files).toContain('sql')
    expect(fileURLToPath(SCHEMA_DIR)).toBe(fileURLToPath(new URL('../sql/', import.meta.url)))
  })

  it('hold no carriage return and end with a newline; the script is every file in manifest order', () => {
    for (const file of SCHEMA_FILES) {
      const text = schemaFile(file)
      expect({ file, cr: text.includes('\r') }).toEqual({ file, cr: false })
      expect({ file, newline: text.endsWith('\n') }).toEqual({ file, newline: true })
    }
    const script = schemaSql()
    const at = SCHEMA_FILES.map((f) => script.indexOf(`-- ${f}\n`))
    expect(at.every((i) => i >= 0)).toBe(true)
    expect([...at].sort((a, b) => a - b)).toEqual(at)
  })
})
