import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { createInterface } from 'node:readline'
import { fileURLToPath } from 'node:url'
import { CliError } from '../cli-error.js'
import type { DemoWriterInput, DemoWriterReport } from './demo-writer.js'

const WRITER = fileURLToPath(new URL('./demo-writer.js', import.meta.url))
const WRITER_TIMEOUT_MS = 90_000

/** Runs the doomed writer process and kills it with SIGKILL once its first flush committed. */
export async function killWriterMidTurn(input: DemoWriterInput): Promise<{ report: DemoWriterReport; signal: string }> {
  const child = spawn(process.execPath, [WRITER], { stdio: ['pipe', 'pipe', 'pipe'] })
  let stderr = ''
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk))
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>
  child.stdin.end(JSON.stringify(input))
  const lines = createInterface({ input: child.stdout })
  const timer = setTimeout(() => child.kill('SIGKILL'), WRITER_TIMEOUT_MS)
  try {
    const first = await Promise.race([
      (async () => {
        for await (const line of lines) return line
        return undefined
      })(),
      exited.then(() => undefined),
    ])
    if (first === undefined) {
      throw new CliError('DEMO_FAILED', `the demo writer process ended before its first flush: ${stderr.trim() || 'no output'}`)
    }
    const report = JSON.parse(first) as DemoWriterReport
    child.kill('SIGKILL')
    const [, signal] = await exited
    if (signal !== 'SIGKILL') throw new CliError('DEMO_FAILED', `the demo writer was not killed by SIGKILL (${String(signal)})`)
    return { report, signal }
  } finally {
    clearTimeout(timer)
    lines.close()
    // never leave the writer behind, whatever went wrong
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
  }
}
