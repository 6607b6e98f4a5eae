import type * as Hermes from '@turnlog/hermes'
import { CliError } from './cli-error.js'

/** The `@turnlog/hermes` module: `importHermes` and its types. */
export type HermesModule = typeof Hermes

/** The package that holds the hermes importer; an optional peer of the CLI. */
export const HERMES_PACKAGE = '@turnlog/hermes'

/** True when `error` says that `specifier` itself (not one of its dependencies) cannot be found. */
function isMissingPackage(error: unknown, specifier: string): boolean {
  const e = error as { code?: unknown; message?: unknown } | null
  return (
    typeof e === 'object' &&
    e !== null &&
    e.code === 'ERR_MODULE_NOT_FOUND' &&
    typeof e.message === 'string' &&
    e.message.includes(`'${specifier}'`)
  )
}

/**
 * Loads the hermes importer on demand. It is its own package, because it depends on the native
 * `better-sqlite3`: the default install has no native dependency, and `turnlog import --format hermes`
 * needs `@turnlog/hermes` installed next to the CLI. Throws `PACKAGE_MISSING` (one line that says what to
 * install) when it is not; any other failure to load it is thrown as it is.
 *
 * @example
 * ```ts
 * const { importHermes } = await loadHermes()
 * ```
 */
export async function loadHermes(load: () => Promise<HermesModule> = () => import('@turnlog/hermes')): Promise<HermesModule> {
  try {
    return await load()
  } catch (error) {
    if (!isMissingPackage(error, HERMES_PACKAGE)) throw error
    throw new CliError(
      'PACKAGE_MISSING',
      `importing a hermes state.db needs the ${HERMES_PACKAGE} package, which is not installed: install it next to turnlog (npm install ${HERMES_PACKAGE})`,
    )
  }
}
