#!/usr/bin/env node
/**
 * The `turnlog` executable of the umbrella package (`npx turnlog demo` after `npm install turnlog`): the
 * command line of `@turnlog/cli`, run with this process's arguments and exit code. The CLI's reference is
 * `docs/cli.md`, shipped in `@turnlog/cli`.
 * @packageDocumentation
 */
import { processIo, runCli } from '@turnlog/cli'

process.exitCode = await runCli(process.argv.slice(2), processIo())
