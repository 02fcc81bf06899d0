// Work from many projects waiting for a few shared workers. A FIFO across projects lets one
// project's burst hold everyone else back (40 parse-heavy queries from B: A's one-line query waited
// 10-12 s for a compile worker). Here each project has its own FIFO, projects take turns, and a
// project runs at most `perKeyRunning` jobs at once, so a burst queues behind itself: another
// project's job waits at most for one job of each project ahead of it in the turn, never for the
// burst. A project's queue is bounded too (`perKeyQueued`): past it, `push` refuses at once.

export interface FairQueueLimits {
  /** jobs of one key running at once */
  perKeyRunning: number
  /** jobs of one key waiting; past it push() answers false */
  perKeyQueued: number
}

export class FairQueue<K, T> {
  private readonly waiting = new Map<K, T[]>()
  private readonly running = new Map<K, number>()
  /** the keys with waiting jobs, in the order of their next turn */
  private turns: K[] = []

  constructor(private readonly limits: FairQueueLimits) {}

  /** Queues `item` for `key`; false (nothing queued) when the key already has perKeyQueued waiting. */
  push(key: K, item: T): boolean {
    let q = this.waiting.get(key)
    if (!q) {
      q = []
      this.waiting.set(key, q)
      this.turns.push(key)
    }
    if (q.length >= this.limits.perKeyQueued) return false
    q.push(item)
    return true
  }

  /**
   * The next job to start: the first key in turn order whose running count is under its cap; that
   * key goes to the end of the turn. Undefined when nothing may start. Call done(key) when it ends.
   */
  take(): { key: K; item: T } | undefined {
    for (let i = 0; i < this.turns.length; i++) {
      const key = this.turns[i]!
      if ((this.running.get(key) ?? 0) >= this.limits.perKeyRunning) continue
      const q = this.waiting.get(key)!
      const item = q.shift()!
      this.turns.splice(i, 1)
      if (q.length > 0) this.turns.push(key)
      else this.waiting.delete(key)
      this.running.set(key, (this.running.get(key) ?? 0) + 1)
      return { key, item }
    }
    return undefined
  }

  /** A job of `key` taken with take() has ended. */
  done(key: K): void {
    const n = (this.running.get(key) ?? 0) - 1
    if (n <= 0) this.running.delete(key)
    else this.running.set(key, n)
  }

  /** Every waiting job, removed (for a pool that closes). */
  drain(): T[] {
    const all = [...this.waiting.values()].flat()
    this.waiting.clear()
    this.turns = []
    return all
  }

  /** Jobs waiting, all keys together. */
  get size(): number {
    let n = 0
    for (const q of this.waiting.values()) n += q.length
    return n
  }
}
