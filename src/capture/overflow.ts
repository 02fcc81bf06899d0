// Spike detection: a distinct_id sending far above the configured rate is routed to the overflow
// lane, so one hot user cannot delay everyone else's events. A token bucket per (team, distinct_id),
// refilled at `ratePerSecond` with a burst of the same size; the map is bounded.

interface Bucket {
  tokens: number
  at: number
}

export class OverflowDetector {
  private readonly buckets = new Map<string, Bucket>()

  constructor(
    private readonly ratePerSecond: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Takes one token; false means this event is over the rate. */
  allow(teamId: number, distinctId: string, nowMs: number): boolean {
    const key = `${teamId}:${distinctId}`
    let b = this.buckets.get(key)
    if (!b) {
      if (this.buckets.size >= this.maxKeys) this.evictOldest()
      b = { tokens: this.ratePerSecond, at: nowMs }
      this.buckets.set(key, b)
    } else {
      b.tokens = Math.min(this.ratePerSecond, b.tokens + ((nowMs - b.at) / 1000) * this.ratePerSecond)
      b.at = nowMs
    }
    if (b.tokens < 1) return false
    b.tokens -= 1
    return true
  }

  private evictOldest(): void {
    // Map keeps insertion order: drop the first tenth.
    let n = Math.ceil(this.maxKeys / 10)
    for (const k of this.buckets.keys()) {
      this.buckets.delete(k)
      if (--n === 0) break
    }
  }
}
