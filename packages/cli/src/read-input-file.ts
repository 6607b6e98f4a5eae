import { readFile } from 'node:fs/promises'
import { isAbsolute, resolve } from 'node:path'
import { CliError } from './cli-error.js'

/** An absolute path for a file named on the command line (relative to the CLI's working directory). */
export function resolvePath(cwd: string, file: string): string {
  return isAbsolute(file) ? file : resolve(cwd, file)
}

/** Reads a file named on the command line; a missing file is a usage error (`FILE_NOT_FOUND`). */
export async function readInputFile(cwd: string, file: string): Promise<Buffer> {
  const path = resolvePath(cwd, file)
  try {
    return await readFile(path)
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'ENOENT') throw new CliError('FILE_NOT_FOUND', `no such file: ${path}`, { cause: error })
    if (code === 'EISDIR') throw new CliError('USAGE', `${path} is a directory, not a file`, { cause: error })
    throw new CliError('FILE_ERROR', `cannot read ${path}: ${(error as Error).message}`, { cause: error })
  }
}

/**
 * The text of a file read with {@link readInputFile}, decoded as UTF-8 strictly: a file that is not
 * UTF-8 (Latin-1, UTF-16) is a usage error naming it, not text with U+FFFD in place of its bytes (a
 * transcript decoded so would differ from the log in every such message: false findings).
 */
export function utf8Text(bytes: Uint8Array, file: string): string {
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes)
  } catch (cause) {
    throw new CliError('USAGE', `${file} is not UTF-8 text`, { cause, hint: `convert it first, e.g. iconv -f latin1 -t utf-8 ${file}` })
  }
}

/**
 * The records of a JSONL file (one JSON value per non-blank line), or of a file holding one JSON array.
 * Lines are returned as text; callers parse them (with their own error messages).
 */
export function jsonRecords(text: string): string[] {
  const trimmed = text.replace(/^\uFEFF/, '').trim()
  if (trimmed.startsWith('[')) {
    let values: unknown
    try {
      values = JSON.parse(trimmed)
    } catch (cause) {
      throw new CliError('USAGE', 'the file starts with "[" but is not a JSON array', { cause })
    }
    if (Array.isArray(values)) return values.map((v) => JSON.stringify(v))
  }
  return trimmed.split(/\r?\n/).filter((line) => line.trim() !== '')
}
