#!/usr/bin/env node
/**
 * The `turnlog` executable: runs the command line and exits with its code (see `exit-codes.ts`).
 * @packageDocumentation
 */
import { processIo } from './cli-io.js'
import { runCli } from './run-cli.js'

process.exitCode = await runCli(process.argv.slice(2), processIo())
