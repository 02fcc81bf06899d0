import { getHeapStatistics } from 'node:v8'

/**
 * Bytes that concurrent work of this process holds at once, under one limit: each piece of work takes
 * its bytes before it holds them and gives them back when done. Used where many small requests could
 * together pass the heap (capture's inflated bodies, ClickHouse's answers).
 */
export class ByteBudget {
  private held = 0

  constructor(
    /** the most bytes held at once */
    readonly limit: number,
  ) {}

  /** Holds `n` more bytes; false, holding nothing, when that would pass the limit. */
  take(n: number): boolean {
    if (this.held + n > this.limit) return false
    this.held += n
    return true
  }

  /** Gives back `n` bytes taken before. */
  give(n: number): void {
    this.held -= n
  }
}

/** A budget of `1 / divisor` of this process's heap limit. */
export const heapShare = (divisor: number): ByteBudget =>
  new ByteBudget(Math.floor(getHeapStatistics().heap_size_limit / divisor))
