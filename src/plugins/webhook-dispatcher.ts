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

const retryable = (status: number) => status === 408 || status === 429 || status >= 500

export class WebhookDispatcher {
  private readonly pending = new Set<Promise<void>>()

  /** `maxPending` bounds memory when an endpoint is down: beyond it new deliveries are dropped. */
  constructor(private readonly maxPending = 10_000) {}

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
      const base = Math.min(MAX_BACKOFF_MS, d.initialBackoffMs * 2 ** (attempt - 1))
      const wait = Math.round(base / 2 + (Math.random() * base) / 2)
      d.log('WARN', `Attempt ${attempt} to deliver ${d.label} failed (${failure}); retrying in ${wait} ms`)
      await new Promise((r) => setTimeout(r, wait))
    }
  }
}
