import type { KV, KvWatchEntry } from '@nats-io/kv'
import type { Logger } from '../observability/logger.ts'

/** A running watch of a whole bucket (watchBucket). */
export interface BucketWatch {
  /**
   * Resolves true once the bucket's entries as of the start have been applied (at once when it was
   * empty); false when the watch ended before that.
   */
  loaded: Promise<boolean>
  /** Resolves when the watch has ended, by `stop()` or by itself (a failure is logged first). */
  ended: Promise<void>
  stop(): void
}

/**
 * Watches every key of `kv` (the last value of each, then every change, in order), calling `apply`
 * for each entry. The whole bucket is watched because a key filter could match none of the initial
 * entries, and then nothing would say that the initial load is over: an empty bucket sends no
 * initial entries, otherwise the last initial one is the first marked as an update. `loaded` also
 * resolves (false) if the watch ends before that, so no caller waits forever.
 */
export async function watchBucket(
  kv: KV,
  apply: (entry: KvWatchEntry) => void,
  log: Pick<Logger, 'warn'>,
  what: string,
): Promise<BucketWatch> {
  const status = await kv.status()
  const iter = await kv.watch({ key: '>' })
  let markLoaded: (complete: boolean) => void = () => undefined
  const loaded = new Promise<boolean>((resolve) => (markLoaded = resolve))
  if (status.values === 0) markLoaded(true)
  const ended = (async () => {
    try {
      for await (const entry of iter) {
        apply(entry)
        if (entry.isUpdate) markLoaded(true)
      }
    } catch (err) {
      log.warn({ err }, `${what} watch failed`)
    }
    markLoaded(false)
  })()
  return { loaded, ended, stop: () => iter.stop() }
}
