import { writeFile } from 'node:fs/promises'
import { CliError } from '../cli-error.js'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { buildInspectModel } from '../inspect/build-inspect-model.js'
import { renderInspectHtml } from '../inspect/render-inspect-html.js'
import { resolvePath } from '../read-input-file.js'
import { resolveSessionId } from '../resolve-session-id.js'

/** Options of `turnlog inspect`. */
export interface InspectOptions {
  /** The HTML file to write. */
  readonly html: string
}

/** `turnlog inspect <session> --html <file>`: writes the session's self-contained HTML timeline. */
export async function runInspect(ctx: CommandContext, session: string, options: InspectOptions): Promise<ExitCode> {
  const model = await ctx.withStore(async (store) => buildInspectModel(store, await resolveSessionId(store, session)))
  const html = renderInspectHtml(model)
  const path = resolvePath(ctx.io.cwd, options.html)
  try {
    await writeFile(path, html, 'utf8')
  } catch (error) {
    throw new CliError('FILE_ERROR', `cannot write ${path}: ${(error as Error).message}`, { cause: error })
  }
  const messages = new Set(model.items.flatMap((i) => (i.kind === 'message' ? [i.id] : []))).size
  ctx.print(
    {
      file: path,
      bytes: Buffer.byteLength(html),
      sessionId: model.session.id,
      version: model.session.version,
      items: model.items.length,
      messages,
      findings: model.findings.length,
    },
    () =>
      `wrote ${path} (${(Buffer.byteLength(html) / 1024).toFixed(0)} KB): session ${model.session.id}, version ${model.session.version}, ${messages} messages, ${model.items.length} timeline entries, ${model.findings.length} audit finding(s)`,
  )
  return EXIT_CODES.ok
}
