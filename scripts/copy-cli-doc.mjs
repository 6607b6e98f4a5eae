// `prepack` of @turnlog/cli: ships the CLI reference (docs/cli.md, which `turnlog --help` names) inside the
// package as docs/cli.md. The copy is generated at pack time and ignored by git; docs/cli.md stays the source.
import { copyFileSync, mkdirSync } from 'node:fs'
import { fileURLToPath } from 'node:url'

const root = fileURLToPath(new URL('..', import.meta.url))
mkdirSync(`${root}packages/cli/docs`, { recursive: true })
copyFileSync(`${root}docs/cli.md`, `${root}packages/cli/docs/cli.md`)
