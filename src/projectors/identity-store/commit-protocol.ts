import type { StateValue } from './reads.ts'

// Exactly-once under redelivery (docs/projectors.md, "Identity state"): a batch's state is written only
// after its ClickHouse rows, and every value carries the position that wrote it (`at`) and the value it
// replaced (`p`). The watermark of the source (the highest stream sequence whose batch was committed
// completely) is written last. A value whose `at` is above its source's watermark belongs to a batch
// that crashed half-way: readers see `p`, the state before that batch, so the redelivered batch is
// applied to exactly the state it was first applied to and stamps its events identically.

/** A value as kept in the KV bucket. */
export interface StoredValue {
  /** the value */
  v: StateValue | null
  /** [source, stream sequence] of the batch that wrote it */
  at: [string, number]
  /** the value it replaced */
  p: StateValue | null
}

/** What a reader sees of `stored`, given the watermark of the source that wrote it. */
export function visibleValue(stored: StoredValue | undefined, watermark: number): StateValue | null {
  if (!stored) return null
  return stored.at[1] > watermark ? stored.p : stored.v
}

/** The source whose watermark decides what `stored` shows. */
export const writerOf = (stored: StoredValue): string => stored.at[0]

const RECENT_COMMITS = 16

/**
 * Counts finished commits and remembers the keys of the last few, so that a read that was in flight
 * while a commit landed can tell whether its value went stale (and must not be cached).
 */
export class CommitLog {
  private gen = 0
  private readonly recent: { gen: number; keys: Set<string> }[] = []

  /** The current generation: take it before a read, pass it to wentStale after. */
  get generation(): number {
    return this.gen
  }

  /** Records a finished commit of `keys`. */
  record(keys: Iterable<string>): void {
    this.gen++
    this.recent.push({ gen: this.gen, keys: new Set(keys) })
    if (this.recent.length > RECENT_COMMITS) this.recent.shift()
  }

  /** Forgets everything: every read in flight counts as stale. */
  reset(): void {
    this.gen++
    this.recent.length = 0
  }

  /**
   * Whether a read of `full` begun at generation `gen` may have missed a commit: true when a commit
   * since then wrote the key, or when too many commits passed to tell (or `full` is undefined: any).
   */
  wentStale(gen: number, full: string | undefined): boolean {
    if (gen === this.gen) return false
    const oldest = this.recent[0]
    if (full === undefined || !oldest || oldest.gen > gen + 1) return true
    return this.recent.some((r) => r.gen > gen && r.keys.has(full))
  }
}
