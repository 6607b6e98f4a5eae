import { DEFAULT_MESSAGE_FORMAT, readingFormat, type ChatMessage, type MessagePreview } from '@turnlog/core'
import { isBidiControl } from '@turnlog/audit/internal'

/**
 * A short form of a UUID for timelines: its last 8 hex digits. (UUIDv7 ids minted in the same
 * millisecond share their first digits, so the usual prefix would not tell them apart.)
 */
export function shortId(id: string): string {
  return id.length > 8 ? `…${id.slice(-8)}` : id
}

/**
 * Makes control characters, lone surrogates, line/paragraph separators and bidi controls (Unicode's
 * Bidi_Control: embeddings, overrides, isolates, the marks LRM, RLM and ALM) visible, so a payload can
 * neither drive the terminal nor reorder what it shows.
 */
export function visible(text: string): string {
  let out = ''
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1)
      if (d >= 0xdc00 && d <= 0xdfff) {
        out += text[i] ?? ''
        out += text[i + 1] ?? ''
        i++
        continue
      }
    }
    if (c >= 0xd800 && c <= 0xdfff) out += `\\u${c.toString(16)}`
    else if (c === 0x0a) out += '⏎'
    else if (c < 0x20 || (c >= 0x7f && c < 0xa0)) out += `\\x${c.toString(16).padStart(2, '0')}`
    else if (c === 0x2028 || c === 0x2029 || isBidiControl(c)) out += `\\u${c.toString(16).padStart(4, '0')}`
    else out += text[i] ?? ''
  }
  return out
}

/** Shortens text to `width` characters, marking the cut with an ellipsis. */
export function truncate(text: string, width: number): string {
  return text.length <= width ? text : `${text.slice(0, Math.max(0, width - 1))}…`
}

/** The text of a message's content (parts joined), without tool calls. */
export function contentText(payload: ChatMessage): string {
  const c = payload.content
  if (typeof c === 'string') return c
  if (Array.isArray(c)) {
    return c.map((p) => (typeof p['text'] === 'string' ? p['text'] : `[${p.type}]`)).join(' ')
  }
  return ''
}

/** What a message's format shows of it; `?` for a format whose preview throws (an application's own). */
export function previewOf(payload: unknown, format: string | undefined): MessagePreview {
  try {
    return readingFormat(format).preview(payload)
  } catch {
    return { role: '?', kind: '?', text: '' }
  }
}

/** The speaker column of a message: its chat `role`, or what its format's preview names. */
export function roleOf(message: { readonly payload: unknown; readonly format?: string | undefined }): string {
  return visible(previewOf(message.payload, message.format).role)
}

/**
 * A one-line summary of a provider message: its text, its tool calls, or the call it answers. A
 * message of another format (`format`) shows its format's kind and text, and the calls it opens or
 * answers.
 */
export function previewPayload(payload: ChatMessage, width = 72, format?: string): string {
  if (format !== undefined && format !== DEFAULT_MESSAGE_FORMAT) return previewOther(payload, width, format)
  const parts: string[] = []
  const text = contentText(payload)
  if (text !== '') parts.push(`"${truncate(visible(text), width)}"`)
  if (payload.role === 'assistant' && Array.isArray(payload.tool_calls)) {
    for (const call of payload.tool_calls) {
      const name = call.function?.name ?? call.type ?? 'call'
      parts.push(
        `→ ${visible(name)}(${truncate(visible(call.function?.arguments ?? ''), 40)}) [${visible(call.id ?? call.call_id ?? '?')}]`,
      )
    }
  }
  if (payload.role === 'tool') parts.unshift(`← [${visible(payload.tool_call_id ?? payload.call_id ?? '?')}]`)
  return parts.join(' ')
}

function previewOther(payload: unknown, width: number, format: string): string {
  const preview = previewOf(payload, format)
  const parts = [`[${visible(format)} ${visible(preview.kind)}]`]
  if (preview.text !== '') parts.push(`"${truncate(visible(preview.text), width)}"`)
  try {
    const reader = readingFormat(format)
    for (const id of reader.toolCalls(payload)) parts.push(`→ [${visible(id)}]`)
    for (const id of reader.toolResults(payload)) parts.unshift(`← [${visible(id)}]`)
  } catch {
    // a format whose pairing throws: the preview alone
  }
  return parts.join(' ')
}

/** Renders rows as left-aligned columns separated by two spaces. */
export function columns(rows: readonly (readonly string[])[]): string {
  const widths: number[] = []
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)))
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n')
}
