const WINDOW_MS = 60_000

/**
 * The per-organization flag-request quota: at most `perMinute` evaluation requests per
 * organization in each fixed one-minute window (0 = unlimited). Each process counts its own
 * requests, so with N evaluating processes behind a balancer the effective limit is up to N
 * times the setting.
 */
export class FlagQuota {
  private readonly windows = new Map<string, { start: number; count: number }>()

  constructor(private readonly perMinute: number) {}

  /** Counts one request of `organizationId`; false when it is over the quota. */
  allow(organizationId: string, now = Date.now()): boolean {
    if (this.perMinute <= 0) return true
    const w = this.windows.get(organizationId)
    if (!w || now - w.start >= WINDOW_MS) {
      if (this.windows.size > 100_000) this.windows.clear()
      this.windows.set(organizationId, { start: now, count: 1 })
      return true
    }
    w.count++
    return w.count <= this.perMinute
  }
}
