import { execFile } from 'node:child_process'
import { existsSync } from 'node:fs'
import { promisify } from 'node:util'

/** Where the test machine's Chromium is (the test command's pretest installs it). */
export const CHROMIUM = '/usr/bin/chromium'

/**
 * Runs headless Chromium with `args` (`--dump-dom file://…`, `--screenshot=…`) on the profile directory
 * `profile`, and returns what it prints. Throws, saying how to install it, when Chromium is missing.
 */
export async function headlessChromium(profile: string, args: readonly string[]): Promise<string> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(`${CHROMIUM} is missing: install it (apt-get install -y chromium; the test command's pretest does this as root)`)
  }
  const { stdout } = await promisify(execFile)(
    CHROMIUM,
    [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--no-first-run',
      `--user-data-dir=${profile}`,
      ...args,
    ],
    { timeout: 60_000, maxBuffer: 32 * 1024 * 1024, encoding: 'utf8' },
  )
  return stdout
}
