/**
 * Oracles computed with node:crypto, independently of the code under test (which uses @noble/hashes
 * and the uuid package), so that a test pins a format instead of restating the implementation.
 */
import { createHash } from 'node:crypto'

/** Hex SHA-256 of raw bytes or of a string's UTF-8 bytes. */
export function sha256(data: string | Uint8Array): string {
  return createHash('sha256').update(data).digest('hex')
}

/**
 * UTF-8 bytes of a string, where a lone surrogate is written as the 3-byte sequence of its code unit
 * (WTF-8; Python's `encode('utf-8', 'surrogatepass')`). Equal to UTF-8 for well-formed strings.
 */
export function wtf8(text: string): Uint8Array {
  // well-formed runs go through node's own UTF-8 encoder; a lone surrogate (a code point of category
  // Cs under the u flag) is written by hand: 0xED, then its low 12 bits in two continuation bytes
  const pieces = text.split(/(\p{Cs})/u).map((piece) => {
    if (!/^\p{Cs}$/u.test(piece)) return Buffer.from(piece, 'utf8')
    const unit = piece.charCodeAt(0)
    return Buffer.from([0xed, 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)])
  })
  return Buffer.concat(pieces)
}

/** RFC 4122 §4.3 name-based UUID, version 5 (SHA-1), lower-case. */
export function uuidV5(name: string, namespace: string): string {
  const ns = Buffer.from(namespace.replace(/-/g, ''), 'hex')
  const bytes = createHash('sha1').update(ns).update(wtf8(name)).digest().subarray(0, 16)
  bytes[6] = ((bytes[6] ?? 0) & 0x0f) | 0x50
  bytes[8] = ((bytes[8] ?? 0) & 0x3f) | 0x80
  const hex = bytes.toString('hex')
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`
}

/** The RFC 4122 DNS namespace. */
export const DNS_NAMESPACE = '6ba7b810-9dad-11d1-80b4-00c04fd430c8'
