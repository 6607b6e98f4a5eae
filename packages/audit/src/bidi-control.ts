/**
 * Unicode's Bidi_Control characters: the Arabic letter mark (U+061C), the marks LRM and RLM, the
 * embeddings and overrides (U+202A–U+202E) and the isolates (U+2066–U+2069). Each can make text display
 * in another order than it is, so text from a payload is never shown with them raw. One definition for
 * the audit's explanations and report text and the CLI's terminal output (the inspect page, a script of
 * its own without imports, keeps the same list in `page-dom.ts`).
 */
export const BIDI_CONTROLS = /[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g

/** True when the UTF-16 code unit `code` is one of {@link BIDI_CONTROLS}. */
export function isBidiControl(code: number): boolean {
  return code === 0x061c || code === 0x200e || code === 0x200f || (code >= 0x202a && code <= 0x202e) || (code >= 0x2066 && code <= 0x2069)
}
