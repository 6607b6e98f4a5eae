import { describe, expect, it } from '@jest/globals'
import { spawnSync } from 'node:child_process'
import { fileURLToPath } from 'node:url'
import fc from 'fast-check'
import { EXTERNAL_ID_NAMESPACE, EXTERNAL_SCOPE_NAMESPACE, createMessage, messageIdFromExternal } from '@turnlog/core'
import { nonEmptyWeirdStringArb } from '@turnlog/testing'

const coreDir = fileURLToPath(new URL('..', import.meta.url))

/** Message ids as four chat platforms write them. */
const PLATFORM_IDS = [
  'telegram:chat42:msg9001',
  'slack:T024BE7LD:C024BE91L:1700000000.000100',
  'discord:123456789012345678',
  'whatsapp:wamid.HBgLMTU1NTU1NTU1NTUVAgASGBQzQTg2',
]

/** An RFC 4122 §4.3 (name-based, SHA-1) implementation on node:crypto, with WTF-8 bytes for lone surrogates. */
const RFC4122_V5 = `
const wtf8 = (s) => {
  const out = []
  for (const ch of s) {
    const c = ch.codePointAt(0)
    if (c < 0x80) out.push(c)
    else if (c < 0x800) out.push(0xc0 | (c >> 6), 0x80 | (c & 63))
    else if (c < 0x10000) out.push(0xe0 | (c >> 12), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
    else out.push(0xf0 | (c >> 18), 0x80 | ((c >> 12) & 63), 0x80 | ((c >> 6) & 63), 0x80 | (c & 63))
  }
  return Buffer.from(out)
}
const rfc4122v5 = (name, ns) => {
  const b = createHash('sha1').update(Buffer.from(ns.replace(/-/g, ''), 'hex')).update(wtf8(name)).digest().subarray(0, 16)
  b[6] = (b[6] & 0x0f) | 0x50
  b[8] = (b[8] & 0x3f) | 0x80
  const h = b.toString('hex')
  return [h.slice(0, 8), h.slice(8, 12), h.slice(12, 16), h.slice(16, 20), h.slice(20)].join('-')
}
`

/**
 * Runs in a fresh `node` process: derives the namespace from its DNS name, then each id twice, with
 * the `uuid` package (well-formed names only: its string path throws on lone surrogates) and with an
 * RFC 4122 §4.3 implementation on node:crypto (WTF-8 bytes for lone surrogates).
 */
const CHILD = `
import { createHash } from 'node:crypto'
import { v5 } from 'uuid'
${RFC4122_V5}const namespace = v5('external-id.turnlog.dev', v5.DNS)
// setEncoding: decoding chunk by chunk would split multi-byte characters at chunk boundaries
process.stdin.setEncoding('utf8')
const names = JSON.parse(await new Promise((resolve) => { let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => resolve(s)) }))
const wellFormed = (s) => !/\\p{Cs}/u.test(s)
process.stdout.write(JSON.stringify({
  namespace,
  crypto: names.map((n) => rfc4122v5(n, namespace)),
  uuid: names.map((n) => (wellFormed(n) ? v5(n, namespace) : null)),
}))
`

describe('external ids (properties)', () => {
  it('derive the same message id in another process, for hundreds of weird and ordinary external ids', () => {
    // given
    const generated = [
      ...fc.sample(fc.stringMatching(/^[a-z]{2,10}:[0-9]{1,12}:[0-9a-f]{4,16}$/), 50),
      ...fc.sample(nonEmptyWeirdStringArb, 250),
    ]
    const names = [...PLATFORM_IDS, ...generated]

    // when
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', CHILD], {
      cwd: coreDir, // resolve `uuid` from @turnlog/core's own dependencies
      input: JSON.stringify(names),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    })
    if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`)
    const other = JSON.parse(child.stdout) as { namespace: string; crypto: string[]; uuid: (string | null)[] }
    const here = names.map((n) => messageIdFromExternal(n))

    // then
    expect(other.namespace).toBe(EXTERNAL_ID_NAMESPACE)
    expect(here).toEqual(other.crypto)
    here.forEach((id, i) => {
      if (other.uuid[i] !== null) expect(id).toBe(other.uuid[i])
    })
    expect(other.uuid.filter((u) => u !== null).length).toBeGreaterThan(50)
    expect(other.uuid.some((u) => u === null)).toBe(true)
    names.forEach((n, i) => expect(createMessage({ role: 'user', content: 'hi' }, { externalId: n, scope: null }).id).toBe(here[i]))
    expect(new Set(here).size).toBe(new Set(names).size)
  })

  it("scoped: UUIDv5 of the externalId in the scope's namespace, the same in another process; distinct (scope, externalId) pairs never share an id (issue 13.16)", () => {
    // given: pairs of weird scopes and external ids, with the same external id in several scopes
    const pairs = fc.sample(
      fc.tuple(
        fc.oneof(nonEmptyWeirdStringArb, fc.constantFrom('telegram:1', 'telegram:2', 'slack:T1:C1')),
        fc.oneof(nonEmptyWeirdStringArb, fc.constantFrom('9001', '1', 'msg')),
      ),
      200,
    )
    const SCOPED_CHILD = `
import { createHash } from 'node:crypto'
${RFC4122_V5}const v5 = rfc4122v5
const DNS = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'
const root = v5('external-scope.turnlog.dev', DNS)
process.stdin.setEncoding('utf8')
const pairs = JSON.parse(await new Promise((resolve) => { let s = ''; process.stdin.on('data', (d) => (s += d)); process.stdin.on('end', () => resolve(s)) }))
process.stdout.write(JSON.stringify({ root, ids: pairs.map(([scope, id]) => v5(id, v5(scope, root))) }))
`

    // when
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', SCOPED_CHILD], {
      input: JSON.stringify(pairs),
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    })
    if (child.status !== 0) throw new Error(`child failed: ${child.stderr}`)
    const other = JSON.parse(child.stdout) as { root: string; ids: string[] }
    const here = pairs.map(([scope, externalId]) => createMessage({ role: 'user', content: 'hi' }, { externalId, scope }).id)

    // then
    expect(other.root).toBe(EXTERNAL_SCOPE_NAMESPACE)
    expect(here).toEqual(other.ids)
    expect(here).toEqual(pairs.map(([scope, externalId]) => messageIdFromExternal(externalId, scope)))
    expect(new Set(here).size).toBe(new Set(pairs.map((p) => JSON.stringify(p))).size)
    // and never the unscoped id of the same external id
    pairs.forEach(([, externalId], i) => expect(here[i]).not.toBe(messageIdFromExternal(externalId)))
  })
})
