import { lookup } from 'node:dns/promises'
import { BlockList, isIP } from 'node:net'
import { backoffDelay, sleep } from '../retry/backoff.ts'
import type { LogType } from './types.ts'

// Webhook deliveries run beside the pipeline, not inside it: a slow or failing endpoint must not
// hold back the projector. Each delivery retries with exponential backoff (and jitter) on network
// errors, timeouts, 408, 429 and 5xx; other statuses are final.

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

const MAX_BACKOFF_MS = 60_000

/** The first address of the URL's host that is loopback, private, link-local or unspecified. */
export async function privateAddressOf(url: string): Promise<string | undefined> {
  const host = new URL(url).hostname.replace(/^\[|\]$/g, '')
  const addresses = isIP(host)
    ? [host]
    : (await lookup(host, { all: true }).catch(() => [])).map((a) => a.address)
  return addresses.find((a) => {
    // an IPv4-mapped IPv6 address is checked as the IPv4 address it carries
    const v4 = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(a)?.[1]
    return v4 ? PRIVATE.check(v4, 'ipv4') : PRIVATE.check(a, isIP(a) === 6 ? 'ipv6' : 'ipv4')
  })
}

const PRIVATE = new BlockList()
for (const [net, bits] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv4')
for (const [net, bits] of [
  ['::', 128],
  ['::1', 128],
  ['fc00::', 7],
  ['fe80::', 10],
] as const)
  PRIVATE.addSubnet(net, bits, 'ipv6')

const retryable = (status: number) => status === 408 || status === 429 || status >= 500

export class WebhookDispatcher {
  private readonly pending = new Set<Promise<void>>()

  /**
   * `maxPending` bounds memory when an endpoint is down: beyond it new deliveries are dropped.
   * `allowPrivate`: a webhook URL is set by a project's users, so by default it may not reach
   * loopback, private or link-local addresses (Burrow's own servers live there).
   */
  constructor(
    private readonly maxPending = 10_000,
    public allowPrivate = false,
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

  private async deliver(d: Delivery): Promise<void> {
    if (!this.allowPrivate) {
      const refused = await privateAddressOf(d.url)
      if (refused) {
        d.log(
          'ERROR',
          `Refused ${d.label}: ${d.url} resolves to ${refused}, a private address ` +
            '(set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow it)',
        )
        return
      }
    }
    const payload = JSON.stringify(d.body)
    for (let attempt = 1; attempt <= d.maxAttempts; attempt++) {
      let failure: string
      let again = true
      try {
        const res = await fetch(d.url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', ...d.headers },
          body: payload,
          signal: AbortSignal.timeout(d.timeoutMs),
        })
        await res.arrayBuffer().catch(() => undefined)
        if (res.ok) {
          d.log('DEBUG', `Delivered ${d.label} to ${d.url} (HTTP ${res.status}, attempt ${attempt})`)
          return
        }
        failure = `HTTP ${res.status}`
        again = retryable(res.status)
      } catch (err) {
        failure =
          err instanceof Error ? (err.cause as Error | undefined)?.message || err.message : String(err)
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
