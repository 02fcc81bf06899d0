import type { ImportEvent } from './events.ts'

// Posts one batch to capture as a historical migration (capture puts it on the historical lane, which
// the projector applies in log order) and waits for its acknowledgement, which capture gives only
// once JetStream holds the events. Network errors, timeouts, 429 and 5xx are retried with backoff;
// anything else (a wrong key, a body capture refuses) ends the import.

export class ImportRequestError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message)
    this.name = 'ImportRequestError'
  }
}

export interface SenderOptions {
  url: string
  token: string
  /** attempts per batch before giving up (the checkpoint keeps what was done) */
  maxAttempts?: number
  initialBackoffMs?: number
  timeoutMs?: number
  onRetry?: (info: { attempt: number; waitMs: number; reason: string }) => void
}

const retryable = (status: number) => status === 408 || status === 429 || status >= 500

export function batchSender(o: SenderOptions): (events: ImportEvent[]) => Promise<void> {
  const endpoint = `${o.url.replace(/\/+$/, '')}/batch/`
  const maxAttempts = o.maxAttempts ?? 10
  const initial = o.initialBackoffMs ?? 500
  return async (events) => {
    const body = JSON.stringify({ api_key: o.token, historical_migration: true, batch: events })
    for (let attempt = 1; ; attempt++) {
      let reason: string
      try {
        const res = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(o.timeoutMs ?? 60_000),
        })
        const text = await res.text()
        if (res.ok) return
        reason = `HTTP ${res.status}: ${text.slice(0, 300)}`
        if (!retryable(res.status))
          throw new ImportRequestError(`capture refused a batch: ${reason}`, res.status)
        const after = Number(res.headers.get('retry-after'))
        if (Number.isFinite(after) && after > 0 && attempt < maxAttempts) {
          const waitMs = Math.min(after * 1000, 60_000)
          o.onRetry?.({ attempt, waitMs, reason })
          await new Promise((r) => setTimeout(r, waitMs))
          continue
        }
      } catch (err) {
        if (err instanceof ImportRequestError) throw err
        reason = (err as Error).cause ? String((err as Error).cause) : (err as Error).message
      }
      if (attempt >= maxAttempts) {
        throw new ImportRequestError(`capture did not accept a batch after ${attempt} attempts: ${reason}`)
      }
      const waitMs = Math.min(30_000, initial * 2 ** (attempt - 1))
      o.onRetry?.({ attempt, waitMs, reason })
      await new Promise((r) => setTimeout(r, waitMs))
    }
  }
}
