/** An I/O failure (ClickHouse, NATS): the batch is retried, nothing is acknowledged. */
export class TransientError extends Error {
  constructor(cause: unknown) {
    super(`transient: ${(cause as Error)?.message ?? String(cause)}`, { cause })
    this.name = 'TransientError'
  }
}

export async function io<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn()
  } catch (err) {
    throw err instanceof TransientError ? err : new TransientError(err)
  }
}
