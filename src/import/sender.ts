import { retry } from '../retry/backoff.ts'

// Posts one batch to capture as a historical migration (capture puts it on the historical lane, which
// the projector applies in log order) and waits for its acknowledgement, which capture gives only
// once JetStream holds the events. Network errors, timeouts, 408, 429 and 5xx are retried by the one
// retry policy (src/retry/backoff.ts), honouring Retry-After; anything else (a wrong key, a body
// capture refuses) ends the import.

/** Capture did not take a batch: refused it (`status`), or attempts ran out. */
export class ImportRequestError extends Error {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(message)
    this.name = 'ImportRequestError'
  }
}

/** Where and how to send the batches. */
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

/** A failure worth another attempt; `retryAfterMs` when the server said how long to wait. */
class RetryableFailure extends Error {
  constructor(
    readonly reason: string,
    readonly retryAfterMs?: number,
  ) {
    super(reason)
  }
}

/**
 * A function that sends one batch, given as the JSON texts of its events (`Mapped.json`), and resolves
 * once capture acknowledged it. The body is `{api_key, historical_migration: true, batch: [...]}`.
 */
export function batchSender(o: SenderOptions): (events: readonly string[]) => Promise<void> {
  const endpoint = `${o.url.replace(/\/+$/, '')}/batch/`
  const maxAttempts = o.maxAttempts ?? 10
  // The events are already JSON: the body is put together around them instead of serialized again.
  const head = `{"api_key":${JSON.stringify(o.token)},"historical_migration":true,"batch":[`
  return async (events) => {
    const body = `${head}${events.join(',')}]}`
    const attempt = async () => {
      let res: Response
      let text: string
      try {
        res = await fetch(endpoint, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body,
          signal: AbortSignal.timeout(o.timeoutMs ?? 60_000),
        })
        text = await res.text()
      } catch (err) {
        throw new RetryableFailure(
          (err as Error).cause ? String((err as Error).cause) : (err as Error).message,
        )
      }
      if (res.ok) return
      const reason = `HTTP ${res.status}: ${text.slice(0, 300)}`
      if (!retryable(res.status))
        throw new ImportRequestError(`capture refused a batch: ${reason}`, res.status)
      const after = Number(res.headers.get('retry-after'))
      throw new RetryableFailure(
        reason,
        Number.isFinite(after) && after > 0 ? Math.min(after * 1000, 60_000) : undefined,
      )
    }
    try {
      await retry(attempt, {
        initialMs: o.initialBackoffMs ?? 500,
        maxMs: 30_000,
        maxAttempts,
        retryable: (err) => err instanceof RetryableFailure,
        waitFor: (err) => (err as RetryableFailure).retryAfterMs,
        onRetry: ({ attempt: n, waitMs, err }) =>
          o.onRetry?.({ attempt: n, waitMs, reason: (err as Error).message }),
      })
    } catch (err) {
      if (!(err instanceof RetryableFailure)) throw err
      throw new ImportRequestError(
        `capture did not accept a batch after ${maxAttempts} attempts: ${err.reason}`,
      )
    }
  }
}
