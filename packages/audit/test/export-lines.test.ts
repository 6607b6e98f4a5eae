import { describe, expect, it } from '@jest/globals'
import { numberedLines, toJsonLine } from '@turnlog/audit/internal'

async function collect<T>(source: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = []
  for await (const item of source) out.push(item)
  return out
}

describe('toJsonLine', () => {
  it('writes one ASCII-safe line that JSON.parse reads back to the same strings', () => {
    // given: everything a line splitter may break on, plus NUL and lone surrogates
    const value = { text: 'a\nb\rc\u2028d\u2029e\u0085f\u0000g\ud800h\udfffi😀' }

    // when
    const line = toJsonLine(value)

    // then
    expect([...line].filter((c) => '\n\r\u2028\u2029\u0085\u0000'.includes(c))).toEqual([])
    expect(line).not.toMatch(/[\ud800-\udfff]/u)
    expect(line).toContain('😀')
    expect(JSON.parse(line)).toEqual(value)
  })
})

describe('numberedLines', () => {
  it('numbers lines from 1, splits items holding several lines and drops line breaks', async () => {
    // when
    const lines = await collect(numberedLines(['a\r\n', 'b\nc\n', '', 'd']))

    // then
    expect(lines).toEqual([
      { line: 1, text: 'a' },
      { line: 2, text: 'b' },
      { line: 3, text: 'c' },
      { line: 4, text: '' },
      { line: 5, text: 'd' },
    ])
  })

  it('refuses what is not a source of strings', async () => {
    await expect(collect(numberedLines(42 as never))).rejects.toMatchObject({ code: 'INVALID_INPUT' })
    await expect(collect(numberedLines([1] as never))).rejects.toMatchObject({ code: 'IMPORT_FAILED', details: { line: 1 } })
  })
})
