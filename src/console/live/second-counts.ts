// Per-second counters over a sliding window: what the Live page's moving chart draws.

/** Counts per whole second for the last `windowSeconds` seconds; older seconds fall off. */
export class SecondCounts {
  private readonly counts: Float64Array
  private readonly stamps: Float64Array
  total = 0

  constructor(readonly windowSeconds: number) {
    this.counts = new Float64Array(windowSeconds)
    this.stamps = new Float64Array(windowSeconds).fill(-1)
  }

  /** Adds `n` to the second holding `atMs`; ignored when that second is outside any window. */
  add(atMs: number, n: number): void {
    const sec = Math.floor(atMs / 1000)
    const slot = sec % this.windowSeconds
    if (this.stamps[slot] !== sec) {
      // An older second in the slot is overwritten; a second older than the slot's is dropped.
      if (this.stamps[slot]! > sec) return
      this.stamps[slot] = sec
      this.counts[slot] = 0
    }
    this.counts[slot]! += n
    this.total += n
  }

  /** The window ending with the second of `nowMs`, oldest first: `start` is its first unix second. */
  series(nowMs: number): { start: number; counts: number[] } {
    const end = Math.floor(nowMs / 1000)
    const start = end - this.windowSeconds + 1
    const counts: number[] = []
    for (let sec = start; sec <= end; sec++) {
      const slot = ((sec % this.windowSeconds) + this.windowSeconds) % this.windowSeconds
      counts.push(this.stamps[slot] === sec ? this.counts[slot]! : 0)
    }
    return { start, counts }
  }

  /** Whether anything was counted inside the window ending at `nowMs`. */
  activeAt(nowMs: number): boolean {
    const oldest = Math.floor(nowMs / 1000) - this.windowSeconds + 1
    for (const s of this.stamps) if (s >= oldest) return true
    return false
  }
}
