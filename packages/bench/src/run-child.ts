import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/**
 * Runs a child mode of `child.js` (with `nodeFlags`) and returns the JSON it prints last. The child is
 * always the compiled one: from the sources (the tests), the package's `dist/` (build first). The lines
 * it printed before (a `--trace-gc` log, when `NODE_OPTIONS` asks for one) go to this process's stderr.
 */
export async function runChild<T>(args: readonly string[], nodeFlags: readonly string[] = []): Promise<T> {
  const here = import.meta.url
  const script = fileURLToPath(new URL(here.endsWith('/src/run-child.ts') ? '../dist/child.js' : './child.js', here))
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [...nodeFlags, script, ...args], { maxBuffer: 1 << 26 }, (error, out, err) => {
      if (error) reject(new Error(`child ${args[0] ?? ''} failed: ${err || error.message}`))
      else resolve(out)
    })
  })
  const lines = stdout.trim().split('\n')
  const last = lines.pop() ?? ''
  if (lines.length > 0) process.stderr.write(`${lines.join('\n')}\n`)
  return JSON.parse(last) as T
}
