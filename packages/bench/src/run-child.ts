import { execFile } from 'node:child_process'
import { fileURLToPath } from 'node:url'

/** Runs a child mode of `child.js` (with `nodeFlags`) and returns the JSON it prints. */
export async function runChild<T>(args: readonly string[], nodeFlags: readonly string[] = []): Promise<T> {
  const script = fileURLToPath(new URL('./child.js', import.meta.url))
  const stdout = await new Promise<string>((resolve, reject) => {
    execFile(process.execPath, [...nodeFlags, script, ...args], { maxBuffer: 1 << 20 }, (error, out, err) => {
      if (error) reject(new Error(`child ${args[0] ?? ''} failed: ${err || error.message}`))
      else resolve(out)
    })
  })
  const last = stdout.trim().split('\n').pop() ?? ''
  return JSON.parse(last) as T
}
