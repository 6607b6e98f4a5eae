import { randomBytes } from 'node:crypto'
import { EVENT_TYPES, TurnlogError, isTurnlogError, type EventType } from '@turnlog/core'
import {
  dropSubscription,
  listSubscriptions,
  type PostgresStore,
  type SubscribedEvent,
  type Subscription,
  type SubscriptionState,
} from '@turnlog/postgres'
import { CliError } from '../cli-error.js'
import type { InterruptReason } from '../cli-io.js'
import type { TailStart } from '../command-choices.js'
import type { CommandContext } from '../command-context.js'
import { EXIT_CODES, type ExitCode } from '../exit-codes.js'
import { formatTailLine } from '../format-tail-line.js'
import { resolveSessionId } from '../resolve-session-id.js'

/** Options of `turnlog tail`. */
export interface TailOptions {
  /** Only this session's events. */
  readonly session?: string
  /** Where a new subscription starts: the whole log, or what commits from now on. */
  readonly from: TailStart
  /** Only these event types (validated against `EVENT_TYPES`). */
  readonly types?: readonly string[]
  /** A durable subscription name: its checkpoint stays and a later tail with the same name resumes. */
  readonly name?: string
  /** Stop after this many events. */
  readonly limit?: number
}

/** The prefix of the ephemeral subscription names `turnlog tail` makes (and removes) when no `--name` is given. */
export const EPHEMERAL_TAIL_PREFIX = 'turnlog-tail-'

/** Why the tail ended without an error. */
type StopReason = InterruptReason | 'limit'

function parseTypes(types: readonly string[] | undefined): readonly EventType[] | undefined {
  if (types === undefined) return undefined
  if (types.length === 0)
    throw new CliError('USAGE', '--types needs at least one event type', { hint: `event types: ${EVENT_TYPES.join(', ')}` })
  const unknown = types.filter((t) => !(EVENT_TYPES as readonly string[]).includes(t))
  if (unknown.length > 0) {
    throw new CliError('USAGE', `unknown event type${unknown.length === 1 ? '' : 's'} in --types: ${unknown.join(', ')}`, {
      hint: `event types: ${EVENT_TYPES.join(', ')}`,
    })
  }
  return [...new Set(types)] as EventType[]
}

/** Removes an ephemeral subscription's checkpoint row (once its consumer has stopped and released it). */
async function dropCheckpoint(store: PostgresStore, name: string): Promise<boolean> {
  try {
    return await dropSubscription(store, name)
  } catch {
    return false // harmless: a stopped subscription's row holds nobody back (see docs/cli.md)
  }
}

/**
 * `turnlog tail`: prints the log's events as they commit, in commit order (`store.subscribe`), one
 * line each (JSONL under `--json`), until SIGINT/SIGTERM, standard output closed, or `--limit` events.
 * Without `--name` it consumes through an ephemeral subscription (`turnlog-tail-<random>`) whose
 * checkpoint row it deletes on the way out; with `--name` the checkpoint is durable and a later tail
 * with the same name resumes after the last event printed. Exits 0 when stopped; a failure (database
 * gone for good, the name held by another consumer) is reported like any other command's.
 */
export async function runTail(ctx: CommandContext, options: TailOptions): Promise<ExitCode> {
  const types = parseTypes(options.types)
  const ephemeral = options.name === undefined
  const name = options.name ?? `${EPHEMERAL_TAIL_PREFIX}${randomBytes(6).toString('hex')}`
  const note = (text: string): void => {
    if (!ctx.json) ctx.io.err(`turnlog tail: ${text}\n`)
  }
  let printed = 0
  let stopped: ((reason: StopReason) => void) | undefined
  const stopRequested = new Promise<StopReason>((resolve) => {
    stopped = resolve
  })
  // stdout closed by its reader, or failing (a full disk): what is written from now on is lost
  let outLost = false
  let interrupted: InterruptReason | undefined
  // listening from the start: a Ctrl-C or SIGTERM while the store opens ends the tail before it
  // subscribes (exit 0; a new durable name is not created), rather than killing the process
  const unlisten = ctx.io.onInterrupt?.((reason) => {
    if (reason === 'stdout-closed') outLost = true
    interrupted ??= reason
    stopped?.(reason)
  })
  try {
    return await ctx.withStore((store) => followLog(store))
  } finally {
    unlisten?.()
  }

  async function followLog(store: PostgresStore): Promise<ExitCode> {
    // a full id may name a session that does not exist yet; a shortened one must match one
    const sessionId = options.session === undefined ? undefined : await resolveSessionId(store, options.session, '--session')
    // one query before subscribing: an unreachable server or a missing schema fails here with its hint
    // (the subscription itself would keep reconnecting), and a durable name in use fails at once
    const existing = (await listSubscriptions(store)).find((s) => s.name === name)
    if (existing?.active === true) {
      throw new TurnlogError(
        'SUBSCRIPTION_LOCKED',
        `subscription "${name}" is being consumed by another process${existing.holderPid === null ? '' : ` (backend pid ${existing.holderPid})`}`,
        {
          details: { name, holderPid: existing.holderPid },
        },
      )
    }
    if (sessionId !== undefined && !ctx.json) {
      await store.getSession(sessionId).catch((error: unknown) => {
        if (isTurnlogError(error) && error.code === 'SESSION_NOT_FOUND')
          note(`session ${sessionId} does not exist yet; waiting for its first event`)
        else throw error
      })
    }
    if (store.flavor === 'pglite') {
      note(
        `the embedded database is single-process: nothing else can write to it while this tail holds it, so ${
          existing === undefined && options.from === 'now'
            ? 'nothing will show from now on; replay the log with --from start'
            : 'only events already in the log will show'
        }`,
      )
    }
    const start =
      existing === undefined
        ? `from ${options.from === 'start' ? 'the start of the log' : 'now'}`
        : `resuming after transaction ${existing.checkpoint.txId}, position ${existing.checkpoint.globalPosition}`
    const filters = [
      ...(sessionId === undefined ? [] : [`session ${sessionId}`]),
      ...(types === undefined ? [] : [`types ${types.join(',')}`]),
      ...(options.limit === undefined ? [] : [`stop after ${options.limit} event(s)`]),
    ]

    if (interrupted !== undefined) {
      note(`stopped before following (${interrupted === 'stdout-closed' ? 'stdout was closed' : interrupted}); nothing was read`)
      return EXIT_CODES.ok
    }
    let lastState: SubscriptionState = 'starting'
    const onStateChange = (state: SubscriptionState): void => {
      if (state === 'running' && lastState === 'starting') {
        note(
          `following ${ephemeral ? 'ephemeral' : 'durable'} subscription "${name}" ${start}${filters.length === 0 ? '' : `; ${filters.join('; ')}`} (Ctrl-C to stop)`,
        )
      } else if (state === 'reconnecting' && lastState !== 'reconnecting') {
        note('connection lost; reconnecting (no event is skipped)')
      } else if (state === 'running' && lastState === 'reconnecting') {
        note('reconnected')
      }
      lastState = state
    }

    const subscription: Subscription = store.subscribe(
      {
        name,
        from: options.from,
        filter: { ...(types === undefined ? {} : { types }), ...(sessionId === undefined ? {} : { sessionId }) },
      },
      async (event: SubscribedEvent) => {
        // never reached: the subscription stops before the event after the limit. Throwing keeps the
        // checkpoint before an event that was not printed, should it ever be.
        if (options.limit !== undefined && printed >= options.limit) throw new Error('turnlog tail: past --limit')
        // an event that cannot reach stdout is not printed: throwing keeps the checkpoint before it
        if (outLost) throw new Error('turnlog tail: stdout is closed')
        ctx.io.out(ctx.json ? `${JSON.stringify(event)}\n` : `${formatTailLine(event)}\n`)
        if (!ephemeral && ctx.io.onInterrupt !== undefined) {
          // a failed write (the reader gone, a full disk) is reported on a later tick: wait for it, so
          // that a durable checkpoint never passes an event that did not reach stdout
          await new Promise((resolve) => setImmediate(resolve))
          if (outLost) throw new Error('turnlog tail: stdout is closed')
        }
        printed++
        if (options.limit !== undefined && printed >= options.limit) {
          // not awaited (stop waits for this handler): it flags the stop before the next event
          void subscription.stop()
          stopped?.('limit')
        }
      },
      // another consumer of a durable name: fail at once rather than wait silently
      { waitForLock: false, onStateChange },
    )
    let reason: StopReason | undefined
    try {
      reason = await Promise.race([stopRequested, subscription.done.then(() => undefined)])
    } finally {
      await subscription.stop()
      if (ephemeral) await dropCheckpoint(store, name)
    }
    if (subscription.error !== null) throw subscription.error
    const cause = { limit: ' (--limit)', SIGINT: ' (SIGINT)', SIGTERM: ' (SIGTERM)', 'stdout-closed': ' (stdout was closed)' }
    const why = `after ${printed} event(s)${reason === undefined ? '' : cause[reason]}`
    const checkpoint = subscription.checkpoint
    note(
      `stopped ${why}; ${
        ephemeral
          ? `subscription "${name}" removed`
          : `checkpoint of "${name}" kept${checkpoint === null ? '' : ` (transaction ${checkpoint.txId}, position ${checkpoint.globalPosition})`}: \`turnlog tail --name ${name}\` resumes after ${printed === 0 ? 'it' : 'the last event printed'}`
      }`,
    )
    return EXIT_CODES.ok
  }
}
