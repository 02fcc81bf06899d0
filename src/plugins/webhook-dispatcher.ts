import { lookup as systemLookup, type LookupAddress, type LookupOptions } from 'node:dns'
import { request as httpRequest } from 'node:http'
import { request as httpsRequest } from 'node:https'
import { isIP } from 'node:net'
import ipaddr from 'ipaddr.js'
import { backoffDelay, sleep } from '../retry/backoff.ts'
import type { LogType } from './types.ts'

// Webhook deliveries run beside the pipeline, not inside it: a slow or failing endpoint must not
// hold back the projector. Each delivery retries with exponential backoff (and jitter) on network
// errors, timeouts, 408, 429 and 5xx; other statuses are final.
//
// A webhook URL is chosen by a project's users, and Burrow's own servers (ClickHouse answers any
// `?query=` on loopback) sit on private addresses, so unless WEBHOOK_ALLOW_PRIVATE_NETWORKS is set
// a delivery may only reach public unicast addresses. The address is checked where the socket is
// opened — the resolver's answer is checked and then used for that very connection, so a name that
// resolves differently a moment later (DNS rebinding) gains nothing — and redirects are never
// followed, so a public endpoint cannot bounce the POST to an internal one. A failed lookup fails
// the attempt; nothing is sent.

export interface Delivery {
  url: string
  body: unknown
  headers: Record<string, string>
  maxAttempts: number
  initialBackoffMs: number
  timeoutMs: number
  /** writes the delivery's log lines to the plugin config's log */
  log(type: LogType, message: string): void
  /** for log lines */
  label: string
}

/** Resolves a host name to its addresses (the system resolver unless a test supplies one). */
export type Resolver = (host: string) => Promise<{ address: string; family: number }[]>

const MAX_BACKOFF_MS = 60_000

const systemResolve: Resolver = (host) =>
  new Promise((resolve, reject) =>
    systemLookup(host, { all: true }, (err, addresses) => (err ? reject(err) : resolve(addresses))),
  )

// IPv6 space that ipaddr.js calls unicast but that carries or reaches IPv4 or is not global.
const IPV4_COMPATIBLE = ipaddr.parseCIDR('::/96')
const GLOBAL_UNICAST = ipaddr.parseCIDR('2000::/3')

/**
 * Why `address` may not receive a webhook, or null for a public unicast address. IPv4: anything
 * ipaddr.js classes as special-purpose (loopback, private, link-local, CGNAT, 192.0.0.0/24,
 * benchmarking, documentation, multicast, reserved…). IPv6: the same, plus IPv4-mapped and
 * IPv4-compatible addresses, NAT64 (64:ff9b::/96 and 64:ff9b:1::/48), 6to4, Teredo, and anything
 * outside global unicast 2000::/3.
 */
export function blockedReason(address: string): string | null {
  if (!ipaddr.isValid(address)) return 'not an IP address'
  const ip = ipaddr.parse(address)
  if (ip.kind() === 'ipv4') {
    const range = ip.range()
    return range === 'unicast' ? null : `a ${range} address`
  }
  const v6 = ip as ipaddr.IPv6
  const range = v6.range()
  if (range !== 'unicast') return `a ${range} address`
  if (v6.match(IPV4_COMPATIBLE)) return 'an IPv4-compatible address'
  if (!v6.match(GLOBAL_UNICAST)) return 'outside global unicast'
  return null
}

/** The destination resolved to an address webhooks may not reach; never retried. */
export class AddressRefused extends Error {
  override name = 'AddressRefused'
  constructor(
    readonly address: string,
    readonly reason: string,
  ) {
    super(`${address} is ${reason}`)
  }
}

type LookupCallback = (
  err: NodeJS.ErrnoException | null,
  address: string | LookupAddress[],
  family?: number,
) => void

/**
 * A `lookup` for node:http that resolves with `resolve` and refuses the connection when any
 * answer is blocked: the socket then connects to an address that was just checked.
 */
function guardedLookup(resolve: Resolver, allowPrivate: boolean) {
  return (host: string, options: LookupOptions, callback: LookupCallback): void => {
    resolve(host).then(
      (answers) => {
        const wanted = options.family === 4 || options.family === 6 ? options.family : 0
        const usable = answers.filter((a) => wanted === 0 || a.family === wanted)
        if (usable.length === 0) {
          const err: NodeJS.ErrnoException = new Error(`no address for ${host}`)
          err.code = 'ENOTFOUND'
          return callback(err, '')
        }
        if (!allowPrivate) {
          for (const a of usable) {
            const reason = blockedReason(a.address)
            if (reason) return callback(new AddressRefused(a.address, reason), '')
          }
        }
        if (options.all) return callback(null, usable)
        return callback(null, usable[0]!.address, usable[0]!.family)
      },
      (err: NodeJS.ErrnoException) => callback(err, ''),
    )
  }
}

/** One POST; resolves with the status. Redirects are answers like any other. */
function post(
  url: URL,
  d: Delivery,
  payload: string,
  lookup: ReturnType<typeof guardedLookup>,
): Promise<number> {
  return new Promise((resolve, reject) => {
    const send = url.protocol === 'https:' ? httpsRequest : httpRequest
    const req = send(
      url,
      {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          ...d.headers,
          'content-length': Buffer.byteLength(payload),
        },
        lookup,
        // one connection per delivery: a pooled socket would skip the address check
        agent: false,
        signal: AbortSignal.timeout(d.timeoutMs),
      },
      (res) => {
        res.on('error', reject)
        res.on('end', () => resolve(res.statusCode ?? 0))
        res.resume()
      },
    )
    req.on('error', reject)
    req.end(payload)
  })
}

const retryable = (status: number) => status === 408 || status === 429 || status >= 500
const isRedirect = (status: number) => status >= 300 && status < 400

export class WebhookDispatcher {
  private readonly pending = new Set<Promise<void>>()

  /**
   * `maxPending` bounds memory when an endpoint is down: beyond it new deliveries are dropped.
   * `allowPrivate`: a webhook URL is set by a project's users, so by default it may reach public
   * unicast addresses only (Burrow's own servers live on the others).
   */
  constructor(
    private readonly maxPending = 10_000,
    public allowPrivate = false,
    private readonly resolve: Resolver = systemResolve,
  ) {}

  get inFlight(): number {
    return this.pending.size
  }

  send(d: Delivery): void {
    if (this.pending.size >= this.maxPending) {
      d.log('ERROR', `Dropped ${d.label}: ${this.pending.size} deliveries already pending`)
      return
    }
    const p = this.deliver(d).finally(() => this.pending.delete(p))
    this.pending.add(p)
  }

  /** Resolves when every delivery started so far has succeeded or given up. */
  async idle(): Promise<void> {
    while (this.pending.size > 0) await Promise.allSettled([...this.pending])
  }

  /** A literal IP in the URL never goes through `lookup`, so it is checked here. */
  private literalRefusal(url: URL): AddressRefused | undefined {
    const host = url.hostname.replace(/^\[|\]$/g, '')
    if (this.allowPrivate || isIP(host) === 0) return undefined
    const reason = blockedReason(host)
    return reason ? new AddressRefused(host, reason) : undefined
  }

  private async deliver(d: Delivery): Promise<void> {
    const url = new URL(d.url)
    const lookup = guardedLookup(this.resolve, this.allowPrivate)
    const payload = JSON.stringify(d.body)
    for (let attempt = 1; attempt <= d.maxAttempts; attempt++) {
      let failure: string
      let again = true
      try {
        const refused = this.literalRefusal(url)
        if (refused) throw refused
        const status = await post(url, d, payload, lookup)
        if (status >= 200 && status < 300) {
          d.log('DEBUG', `Delivered ${d.label} to ${d.url} (HTTP ${status}, attempt ${attempt})`)
          return
        }
        failure = isRedirect(status) ? `HTTP ${status} (redirects are not followed)` : `HTTP ${status}`
        again = retryable(status)
      } catch (err) {
        if (err instanceof AddressRefused) {
          d.log(
            'ERROR',
            `Refused ${d.label}: ${d.url} resolves to ${err.address}, ${err.reason}, not a public address ` +
              '(set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow private addresses)',
          )
          return
        }
        failure = err instanceof Error ? err.message : String(err)
      }
      if (!again || attempt === d.maxAttempts) {
        d.log('ERROR', `Failed to deliver ${d.label} to ${d.url} after ${attempt} attempt(s): ${failure}`)
        return
      }
      const wait = Math.round(
        backoffDelay({ initialMs: d.initialBackoffMs, maxMs: MAX_BACKOFF_MS, jitter: true }, attempt),
      )
      d.log('WARN', `Attempt ${attempt} to deliver ${d.label} failed (${failure}); retrying in ${wait} ms`)
      await sleep(wait)
    }
  }
}

/** The first address of the URL's host that a webhook may not reach; undefined when all may. */
export async function privateAddressOf(
  url: string,
  resolve: Resolver = systemResolve,
): Promise<string | undefined> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host) ? [host] : (await resolve(host)).map((a) => a.address)
  return addresses.find((a) => blockedReason(a) !== null)
}
