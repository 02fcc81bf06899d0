// The one retry policy: exponential backoff with optional full jitter, used wherever Burrow waits
// before trying again (projector batches, webhook deliveries, import requests, KV revision races).

export interface BackoffPolicy {
  /** wait before the first retry */
  initialMs: number
  /** no wait is longer than this */
  maxMs: number
  /** randomize each wait over [0, wait] so many retriers do not collide again */
  jitter?: boolean
}

/** The wait before retry number `attempt` (1-based): initialMs·2^(attempt−1), capped at maxMs. */
export function backoffDelay(policy: BackoffPolicy, attempt: number): number {
  const exp = Math.min(Math.max(attempt - 1, 0), 30)
  const wait = Math.min(policy.maxMs, policy.initialMs * 2 ** exp)
  return policy.jitter ? Math.random() * wait : wait
}

/** Resolves after `ms`, or at once (rejecting with the signal's reason) when `signal` aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason)
    const t = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(t)
      reject(signal!.reason)
    }
    signal?.addEventListener('abort', onAbort, { once: true })
  })
}

export interface RetryOptions extends BackoffPolicy {
  /** attempts in all, the first included; Infinity retries until `retryable` says no */
  maxAttempts: number
  /** whether a failure may be retried; a false answer rethrows at once */
  retryable?: (err: unknown) => boolean
  /** a wait the failure itself asks for (e.g. an HTTP Retry-After), used instead of the policy's */
  waitFor?: (err: unknown) => number | undefined
  /** called before each wait, e.g. to log */
  onRetry?: (info: { attempt: number; waitMs: number; err: unknown }) => void
  signal?: AbortSignal
}

/**
 * Runs `fn` until it resolves, waiting by the policy between attempts. Rethrows the last error
 * when attempts run out or `retryable` refuses it.
 */
export async function retry<T>(fn: (attempt: number) => Promise<T>, o: RetryOptions): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn(attempt)
    } catch (err) {
      if (attempt >= o.maxAttempts || (o.retryable && !o.retryable(err))) throw err
      const waitMs = o.waitFor?.(err) ?? backoffDelay(o, attempt)
      o.onRetry?.({ attempt, waitMs, err })
      await sleep(waitMs, o.signal)
    }
  }
}
