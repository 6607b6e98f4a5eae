/**
 * A loopback TCP proxy that understands just enough of the Postgres wire protocol to break a
 * connection at the worst moment: right after the server committed (the client never hears), or right
 * before the commit (the server rolls back). Fault tests put it between a store and the server.
 * @packageDocumentation
 */
import { createConnection, createServer, type Server, type Socket } from 'node:net'

/**
 * What an armed fault does at the commit point of the first transaction it matches.
 *
 * - `ack-lost`: forwards the commit to the server, withholds every byte of the server's answer until
 *   the server says `ReadyForQuery` (the commit is done), then cuts the connection. The server
 *   committed; the client only sees its connection die.
 * - `commit-lost`: never forwards the commit. For an explicit transaction (`COMMIT` as a simple query)
 *   it cuts instead of forwarding it; for a statement in an implicit transaction (extended protocol:
 *   Parse/Bind/Execute/Sync) it forwards everything but the `Sync`, sends a `Flush` and waits until the
 *   server reports the statement complete (so its rows exist, uncommitted), then cuts. The server
 *   rolls back.
 */
export type ProxyFaultKind = 'ack-lost' | 'commit-lost'

/** How the proxy closes the client's socket when it cuts a connection. */
export type ProxyCloseMode = 'fin' | 'rst'

/** A one-shot fault, armed with {@link TcpProxy.arm}. */
export interface ProxyFault {
  readonly kind: ProxyFaultKind
  /**
   * Which transactions qualify: one of the SQL texts sent in the transaction matches. Default: any
   * statement that writes (`insert`, `update`, `delete`, `append_messages`).
   */
  readonly match?: (sql: string) => boolean
  /**
   * `fin` ends the client's socket cleanly (node-postgres: "Connection terminated unexpectedly"),
   * `rst` resets it (`ECONNRESET`). Default `fin`.
   */
  readonly close?: ProxyCloseMode
}

/** What happened when an armed fault fired. */
export interface ProxyFaultReport {
  readonly kind: ProxyFaultKind
  /** The SQL texts of the transaction the fault hit, in the order they were sent. */
  readonly sql: readonly string[]
  /**
   * The server's answer the client never saw: `'committed'` when it completed without an error,
   * `'failed'` when it held an ErrorResponse, `'not-sent'` when the commit never reached the server.
   */
  readonly serverOutcome: 'committed' | 'failed' | 'not-sent'
  /** The command tags the server sent in the withheld answer (e.g. `COMMIT`, `SELECT 1`). */
  readonly commandTags: readonly string[]
}

/** Counters of a {@link TcpProxy}. */
export interface TcpProxyStats {
  /** Client connections accepted. */
  readonly connections: number
  /** Client connections open now. */
  readonly open: number
  /** Connections cut by {@link TcpProxy.cutAll}. */
  readonly cut: number
  /** Armed faults that fired. */
  readonly faultsFired: number
}

/** A running proxy. */
export interface TcpProxy {
  /** The port it listens on, on 127.0.0.1. */
  readonly port: number
  /** `connectionString` with its host and port replaced by the proxy's. */
  url(connectionString: string): string
  /**
   * Arms a one-shot fault (replacing one that has not fired yet, whose promise then never settles).
   * The promise resolves when it fired.
   */
  arm(fault: ProxyFault): Promise<ProxyFaultReport>
  /** Disarms a fault that has not fired. */
  disarm(): void
  /** True while a fault is armed and has not fired. */
  readonly armed: boolean
  /** Cuts every open connection now (a network blip); returns how many. */
  cutAll(close?: ProxyCloseMode): number
  /** Counters. */
  readonly stats: TcpProxyStats
  /** Cuts every connection and stops listening. Idempotent. */
  close(): Promise<void>
}

/** Input of {@link startTcpProxy}. */
export interface TcpProxyConfig {
  /** A loopback host (`127.x.x.x`, `::1` or `localhost`): the proxy never forwards anywhere else. */
  readonly targetHost: string
  readonly targetPort: number
}

const SSL_REQUEST = 80877103
const GSSENC_REQUEST = 80877104
const DEFAULT_MATCH = (sql: string): boolean => /\b(insert|update|delete|append_messages)\b/i.test(sql)

interface Armed {
  readonly fault: ProxyFault
  readonly resolve: (report: ProxyFaultReport) => void
}

/** Splits a byte stream into protocol messages; `typed` false for the untyped startup messages. */
class MessageReader {
  #chunks: Buffer[] = []
  #length = 0
  startup: boolean

  constructor(startup: boolean) {
    this.startup = startup
  }

  push(chunk: Buffer): void {
    this.#chunks.push(chunk)
    this.#length += chunk.length
  }

  /** The next complete message, or undefined when more bytes are needed. */
  next(): Buffer | undefined {
    const header = this.startup ? 4 : 5
    if (this.#length < header) return undefined
    const head = this.#peek(header)
    const size = this.startup ? head.readInt32BE(0) : 1 + head.readInt32BE(1)
    if (this.#length < size) return undefined
    const all = this.#chunks.length === 1 ? (this.#chunks[0] as Buffer) : Buffer.concat(this.#chunks, this.#length)
    const message = all.subarray(0, size)
    const rest = all.subarray(size)
    this.#chunks = rest.length > 0 ? [rest] : []
    this.#length = rest.length
    return message
  }

  #peek(n: number): Buffer {
    const first = this.#chunks[0] as Buffer
    if (first.length >= n) return first
    return Buffer.concat(this.#chunks, this.#length).subarray(0, n)
  }
}

function cstring(buffer: Buffer, offset: number): { text: string; end: number } {
  const end = buffer.indexOf(0, offset)
  const stop = end < 0 ? buffer.length : end
  return { text: buffer.toString('utf8', offset, stop), end: stop + 1 }
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host)
}

/**
 * Starts a proxy on 127.0.0.1 (a free port) in front of a loopback Postgres server. It forwards
 * bytes both ways unchanged, tracks each connection's transaction state from the protocol, and fires
 * an armed {@link ProxyFault} at the next matching commit point.
 */
export async function startTcpProxy(config: TcpProxyConfig): Promise<TcpProxy> {
  if (!isLoopback(config.targetHost)) throw new Error(`startTcpProxy forwards to loopback only, not ${config.targetHost}`)
  let armed: Armed | undefined
  let connections = 0
  let cut = 0
  let faultsFired = 0
  const live = new Set<Connection>()

  class Connection {
    readonly client: Socket
    readonly server: Socket
    readonly #fromClient = new MessageReader(true)
    readonly #fromServer = new MessageReader(false)
    /** Single-byte answers to SSL/GSS requests still to come from the server. */
    #singleBytes = 0
    /** The transaction status of the last ReadyForQuery: `I` idle, `T` in a block, `E` failed block. */
    #status = 'I'
    /** SQL texts sent since the connection was last idle. */
    #sql: string[] = []
    /** Named prepared statements of this connection: name → text (from their Parse). */
    readonly #prepared = new Map<string, string>()
    /** Named statements parsed since the last Sync (their Bind adds nothing new). */
    readonly #parsedNow = new Set<string>()
    /** An extended-protocol statement is pending its Sync. */
    #extended = false
    #withholding: { fault: Armed; kind: ProxyFaultKind; tags: string[]; failed: boolean; waitFor: 'ready' | 'complete' } | undefined
    #dead = false

    constructor(client: Socket) {
      this.client = client
      this.server = createConnection({ host: config.targetHost, port: config.targetPort })
      this.client.setNoDelay(true)
      this.server.setNoDelay(true)
      this.client.on('data', (chunk: Buffer) => this.#onClient(chunk))
      this.server.on('data', (chunk: Buffer) => this.#onServer(chunk))
      const close = (): void => this.destroy('fin')
      this.client.on('close', close)
      this.server.on('close', close)
      this.client.on('error', () => this.destroy('fin'))
      this.server.on('error', () => this.destroy('fin'))
    }

    destroy(mode: ProxyCloseMode): void {
      if (this.#dead) return
      this.#dead = true
      live.delete(this)
      if (mode === 'rst') this.client.resetAndDestroy()
      else this.client.destroy()
      this.server.destroy()
    }

    #onClient(chunk: Buffer): void {
      if (this.#dead) return
      this.#fromClient.push(chunk)
      for (let message = this.#fromClient.next(); message !== undefined; message = this.#fromClient.next()) {
        if (this.#dead) return
        if (this.#withholding !== undefined) {
          // a fault is in progress: the client gets no answer anyway; keep the server from seeing more
          continue
        }
        if (this.#fromClient.startup) {
          const code = message.length >= 8 ? message.readInt32BE(4) : 0
          if (code === SSL_REQUEST || code === GSSENC_REQUEST) this.#singleBytes++
          else this.#fromClient.startup = false
          this.server.write(message)
          continue
        }
        this.#onClientMessage(message)
      }
    }

    #onClientMessage(message: Buffer): void {
      const type = String.fromCharCode(message[0] ?? 0)
      let commitPoint = false
      if (type === 'Q') {
        const text = cstring(message, 5).text
        const verb = /^\s*(\w+)/.exec(text)?.[1]?.toLowerCase()
        if (verb === 'commit' || verb === 'end') commitPoint = this.#status === 'T'
        else if (verb === 'begin' || verb === 'start' || verb === 'rollback' || verb === 'abort') {
          // transaction control: no statement of interest
        } else {
          this.#sql.push(text)
          commitPoint = this.#status === 'I' // a simple statement outside a block commits by itself
        }
      } else if (type === 'P') {
        const name = cstring(message, 5)
        const text = cstring(message, name.end).text
        this.#sql.push(text)
        // a named statement is parsed once per connection; later executions only bind it by name
        if (name.text !== '') {
          this.#prepared.set(name.text, text)
          this.#parsedNow.add(name.text)
        }
        this.#extended = true
      } else if (type === 'B') {
        const portal = cstring(message, 5)
        const statement = cstring(message, portal.end).text
        const text = this.#prepared.get(statement)
        if (statement !== '' && text !== undefined && !this.#parsedNow.has(statement)) this.#sql.push(text)
        this.#extended = true
      } else if (type === 'S') {
        this.#parsedNow.clear()
        commitPoint = this.#extended && this.#status === 'I'
        this.#extended = false
      }
      const fault = armed
      if (commitPoint && fault !== undefined && this.#sql.some(fault.fault.match ?? DEFAULT_MATCH)) {
        armed = undefined
        faultsFired++
        this.#fire(fault, type, message)
        return
      }
      this.server.write(message)
    }

    #fire(fault: Armed, type: string, message: Buffer): void {
      const kind = fault.fault.kind
      if (kind === 'ack-lost') {
        this.#withholding = { fault, kind, tags: [], failed: false, waitFor: 'ready' }
        this.server.write(message)
        return
      }
      if (type === 'S') {
        // implicit transaction: let the statement run, but never send the Sync that commits it
        this.#withholding = { fault, kind, tags: [], failed: false, waitFor: 'complete' }
        this.server.write(Buffer.from([0x48, 0, 0, 0, 4])) // Flush: the server sends what it has
        return
      }
      this.#report(fault, kind, 'not-sent', [])
    }

    #report(fault: Armed, kind: ProxyFaultKind, outcome: ProxyFaultReport['serverOutcome'], tags: string[]): void {
      const sql = [...this.#sql]
      this.destroy(fault.fault.close ?? 'fin')
      fault.resolve({ kind, sql, serverOutcome: outcome, commandTags: tags })
    }

    #onServer(chunk: Buffer): void {
      if (this.#dead) return
      let offset = 0
      while (this.#singleBytes > 0 && offset < chunk.length) {
        this.#singleBytes--
        this.client.write(chunk.subarray(offset, offset + 1))
        offset++
      }
      if (offset >= chunk.length) return
      this.#fromServer.push(offset === 0 ? chunk : chunk.subarray(offset))
      for (let message = this.#fromServer.next(); message !== undefined; message = this.#fromServer.next()) {
        if (this.#dead) return
        const type = String.fromCharCode(message[0] ?? 0)
        const held = this.#withholding
        if (held !== undefined) {
          if (type === 'C') held.tags.push(cstring(message, 5).text)
          if (type === 'E') held.failed = true
          if (held.kind === 'ack-lost' && type === 'Z') {
            this.#report(held.fault, held.kind, held.failed ? 'failed' : 'committed', held.tags)
            return
          }
          if (held.kind === 'commit-lost' && (type === 'C' || type === 'E')) {
            this.#report(held.fault, held.kind, 'not-sent', held.tags)
            return
          }
          continue
        }
        if (type === 'Z') {
          this.#status = String.fromCharCode(message[5] ?? 0x49)
          if (this.#status === 'I') this.#sql = []
        }
        this.client.write(message)
      }
    }
  }

  const server: Server = createServer((socket) => {
    connections++
    const connection = new Connection(socket)
    live.add(connection)
  })
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve))
  const address = server.address()
  if (address === null || typeof address === 'string') throw new Error('startTcpProxy: no port')
  const port = address.port
  let closing: Promise<void> | undefined

  return {
    port,
    url(connectionString: string): string {
      const url = new URL(connectionString)
      url.hostname = '127.0.0.1'
      url.port = String(port)
      return url.toString()
    },
    arm(fault: ProxyFault): Promise<ProxyFaultReport> {
      return new Promise((resolve) => {
        armed = { fault, resolve }
      })
    },
    disarm(): void {
      armed = undefined
    },
    get armed(): boolean {
      return armed !== undefined
    },
    cutAll(close: ProxyCloseMode = 'fin'): number {
      const victims = [...live]
      for (const c of victims) c.destroy(close)
      cut += victims.length
      return victims.length
    },
    get stats(): TcpProxyStats {
      return { connections, open: live.size, cut, faultsFired }
    },
    close(): Promise<void> {
      return (closing ??= new Promise<void>((resolve) => {
        armed = undefined
        for (const c of [...live]) c.destroy('fin')
        server.close(() => resolve())
      }))
    },
  }
}
