import { createReadStream } from 'node:fs'
import { open, stat } from 'node:fs/promises'
import { EXPORT_FORMAT, importEvents, importTranscript } from '@turnlog/audit'
import { CliError } from '../cli-error.js'
import type { ImportFormat } from '../command-choices.js'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { shortId, visible } from '../format-text.js'
import { loadHermes } from '../load-hermes.js'
import { createProgressBar, type ProgressBar } from '../progress-bar.js'
import { resolvePath } from '../read-input-file.js'

/** Options of `turnlog import`. */
export interface ImportCommandOptions {
  /** The format; detected from the file when absent. */
  readonly format?: ImportFormat
  /** openai-jsonl only: the session to import into. */
  readonly session?: string
}

const SQLITE_MAGIC = 'SQLite format 3\u0000'

async function checkFile(path: string): Promise<number> {
  try {
    const s = await stat(path)
    if (s.isDirectory()) throw new CliError('USAGE', `${path} is a directory, not a file`)
    return s.size
  } catch (error) {
    if (error instanceof CliError) throw error
    if ((error as { code?: unknown }).code === 'ENOENT') throw new CliError('FILE_NOT_FOUND', `no such file: ${path}`, { cause: error })
    throw new CliError('FILE_ERROR', `cannot read ${path}: ${(error as Error).message}`, { cause: error })
  }
}

/** How far the detection reads for the first line of a JSONL file (a first message can be a long system prompt). */
const MAX_DETECT_BYTES = 64 * 1024 * 1024
const DETECT_CHUNK = 64 * 1024

/**
 * Scans one chunk of the file's start: true once a line break follows a byte that is not blank (a BOM's
 * bytes count as blank); `seen.content` carries over from chunk to chunk.
 */
function firstLineComplete(chunk: Buffer, seen: { content: boolean }): boolean {
  for (const byte of chunk) {
    if (byte === 0x0a) {
      if (seen.content) return true
    } else if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d && byte !== 0xef && byte !== 0xbb && byte !== 0xbf) seen.content = true
  }
  return false
}

/**
 * Tells the format from the start of the file: SQLite's magic, a turnlog export header, or chat
 * messages. It reads until the first non-blank line is complete (up to 64 MiB): a transcript whose
 * first message is longer than one chunk is still a transcript.
 */
export async function detectImportFormat(path: string): Promise<ImportFormat> {
  const handle = await open(path, 'r')
  let head: string
  try {
    const chunks: Buffer[] = []
    const seen = { content: false }
    let size = 0
    for (;;) {
      const buffer = Buffer.alloc(DETECT_CHUNK)
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, size).catch((error: unknown) => {
        // a pipe (`… | turnlog import /dev/stdin`) cannot be read twice: its format must be given
        if ((error as { code?: unknown }).code === 'ESPIPE') {
          throw new CliError('USAGE', `cannot tell the format of ${path}: it is a pipe, which can be read only once`, {
            hint: 'Pass --format turnlog|openai-jsonl (a hermes state.db must be a file).',
            cause: error,
          })
        }
        throw error
      })
      if (bytesRead === 0) break
      chunks.push(buffer.subarray(0, bytesRead))
      size += bytesRead
      if (size === bytesRead && buffer.subarray(0, SQLITE_MAGIC.length).toString('latin1') === SQLITE_MAGIC) break
      // the first non-blank line is complete once a line break follows something that is not blank
      if (firstLineComplete(buffer.subarray(0, bytesRead), seen) || size >= MAX_DETECT_BYTES) break
    }
    head = Buffer.concat(chunks).toString('utf8')
  } finally {
    await handle.close()
  }
  if (head.startsWith(SQLITE_MAGIC)) return 'hermes'
  const first = head
    .replace(/^\uFEFF/, '')
    .split(/\r?\n/)
    .find((l) => l.trim() !== '')
  let value: unknown
  try {
    value = first === undefined ? undefined : JSON.parse(first)
  } catch {
    value = undefined
  }
  if (typeof value === 'object' && value !== null) {
    const v = value as Record<string, unknown>
    if (v['format'] === EXPORT_FORMAT) return 'turnlog'
    if (typeof v['role'] === 'string' || (typeof v['payload'] === 'object' && v['payload'] !== null)) return 'openai-jsonl'
  }
  throw new CliError('USAGE', `cannot tell the format of ${path}: it is neither a SQLite file, a turnlog export, nor JSONL chat messages`, {
    hint: 'Pass --format turnlog|openai-jsonl|hermes.',
  })
}

/**
 * Decodes UTF-8 strictly: a byte sequence that is not UTF-8 throws instead of becoming U+FFFD. The BOM
 * is kept (one at the start of the file is dropped by {@link fileLines}, nowhere else).
 */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true })

/**
 * The file's lines, streamed, moving the progress bar by bytes read. Lines end at `\n` (a `\r` before
 * it is dropped with it). A UTF-8 byte order mark before the first line (what some Windows editors
 * write) is dropped, as the format detection drops it: a file detected as an export or a transcript is
 * read as one. A line that is not UTF-8 (a Latin-1 or UTF-16 file) fails the import, naming the line:
 * decoded leniently, its bytes would be stored for good as U+FFFD replacement characters.
 */
async function* fileLines(path: string, size: number, bar: ProgressBar): AsyncGenerator<string> {
  const stream = createReadStream(path)
  let read = 0
  let first = true
  const decode = (bytes: Buffer): string => {
    const end = bytes.length > 0 && bytes[bytes.length - 1] === 0x0d ? bytes.length - 1 : bytes.length
    let text: string
    try {
      text = STRICT_UTF8.decode(bytes.subarray(0, end))
    } catch {
      // numberedLines reports it as IMPORT_FAILED with this line's number
      throw new Error('the line is not UTF-8 text; convert the file first, e.g. `iconv -f latin1 -t utf-8`')
    }
    if (first && text.startsWith('\uFEFF')) text = text.slice(1)
    first = false
    return text
  }
  let pending: Buffer[] = []
  try {
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      read += chunk.length
      bar.update(Math.round(read / 1024), Math.max(1, Math.round(size / 1024)))
      let start = 0
      for (let end = chunk.indexOf(0x0a); end !== -1; end = chunk.indexOf(0x0a, start)) {
        pending.push(chunk.subarray(start, end))
        const line = pending.length === 1 ? (pending[0] as Buffer) : Buffer.concat(pending)
        pending = []
        start = end + 1
        yield decode(line)
      }
      if (start < chunk.length) pending.push(chunk.subarray(start))
    }
    if (pending.length > 0) yield decode(Buffer.concat(pending))
  } finally {
    stream.destroy()
  }
}

/**
 * `turnlog import <file>`: loads a turnlog export (hash chain verified, idempotent), an OpenAI-format
 * JSONL transcript (one all-or-nothing append, deterministic ids) or a hermes-agent `state.db` (with
 * the optional `@turnlog/hermes` package; `PACKAGE_MISSING` without it).
 */
export async function runImport(ctx: CommandContext, file: string, options: ImportCommandOptions): Promise<ExitCode> {
  const path = resolvePath(ctx.io.cwd, file)
  const size = await checkFile(path)
  const format = options.format ?? (await detectImportFormat(path))
  if (options.session !== undefined && format !== 'openai-jsonl') {
    throw new CliError('USAGE', `--session applies to --format openai-jsonl only (this file is ${format})`, {
      hint: format === 'turnlog' ? 'A turnlog export keeps its own session ids.' : 'hermes sessions get ids derived from their hermes ids.',
    })
  }
  const detected = options.format === undefined
  if (format === 'turnlog') {
    const bar = createProgressBar(ctx.io, { json: ctx.json, title: 'importing', unit: 'KB' })
    const result = await ctx
      .withStore((store) => importEvents(store, fileLines(path, size, bar)), { migrate: true, create: true })
      .finally(() => bar.stop())
    ctx.print({ file: path, format, detected, ...result }, () =>
      [
        `imported ${path} (turnlog export${detected ? ', detected' : ''}): ${result.sessions} session(s), ${result.eventsWritten} event(s) written, ${result.eventsSkipped} already present`,
        ...result.sessionIds.map((id) => `  ${id}`),
      ].join('\n'),
    )
    return EXIT_CODES.ok
  }
  if (format === 'openai-jsonl') {
    const bar = createProgressBar(ctx.io, { json: ctx.json, title: 'importing', unit: 'KB' })
    const result = await ctx
      .withStore(
        (store) => importTranscript(store, fileLines(path, size, bar), options.session === undefined ? {} : { sessionId: options.session }),
        { migrate: true, create: true },
      )
      .finally(() => bar.stop())
    ctx.print(
      { file: path, format, detected, ...result },
      () =>
        `imported ${path} (OpenAI-format JSONL${detected ? ', detected' : ''}) into session ${result.sessionId}: ${result.appended} appended, ${result.duplicates} already present${result.skipped > 0 ? `, ${result.skipped} ephemeral skipped` : ''} (version ${result.version})`,
    )
    return EXIT_CODES.ok
  }
  // the hermes importer is an opt-in package (native better-sqlite3): loaded before anything is opened
  const { importHermes } = await loadHermes()
  const bar = createProgressBar(ctx.io, { json: ctx.json, title: 'importing', unit: 'sessions' })
  const result = await ctx
    .withStore((store) => importHermes(store, path, { onProgress: (p) => bar.update(p.done, p.total, shortId(p.sessionId)) }), {
      migrate: true,
      create: true,
    })
    .finally(() => bar.stop())
  ctx.print({ file: path, format, detected, ...result }, () => {
    const lines = [
      `imported ${path} (hermes state.db${detected ? ', detected' : ''}): ${result.sessions.length} session(s), ${result.eventsWritten} event(s) written`,
    ]
    for (const s of result.sessions) {
      lines.push(
        `  ${s.sessionId}  hermes ${visible(s.hermesSessionId)}: ${s.rows} rows → ${s.appended} appended, ${s.duplicates} already present, ${s.revised} revised, ${s.rewinds} rewind(s), ${s.compactions} compaction(s)${s.liveMatches ? '' : '  (live list differs from the rows marked active: run `turnlog audit`)'}`,
      )
    }
    // hermes ids and values are the file's text: shown escaped, so a hostile state.db cannot drive the terminal
    for (const w of result.warnings) lines.push(`  warning ${w.code}: ${visible(w.message)}`)
    return lines.join('\n')
  })
  return EXIT_CODES.ok
}
