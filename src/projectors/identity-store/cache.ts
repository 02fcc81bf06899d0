import type { StateValue } from './reads.ts'

/** `<ns>.t.<team>` of a full identity key, or undefined for other keys. */
export function teamOfKey(full: string): string | undefined {
  const a = full.indexOf('.')
  if (full.slice(a + 1, a + 3) !== 't.') return undefined
  const b = full.indexOf('.', a + 3)
  return b < 0 ? undefined : full.slice(0, b)
}

/**
 * Committed values by full key, bounded (oldest evicted first), and which teams are held whole
 * ("complete": a key the cache does not hold does not exist). Evicting a key of a complete team
 * makes it incomplete again, since its absent keys can no longer be told from evicted ones.
 */
export class StateCache {
  private readonly values = new Map<string, StateValue | null>()
  private readonly complete = new Set<string>()
  /** teams found too large to hold whole */
  private readonly large = new Set<string>()

  constructor(private readonly size: number) {}

  /** Whether the key's committed value is held (null values included). */
  has(full: string): boolean {
    return this.values.has(full)
  }

  /** The held value; undefined when not held. */
  get(full: string): StateValue | null | undefined {
    return this.values.get(full)
  }

  /** Holds a value, evicting the oldest entry when over the bound. */
  remember(full: string, value: StateValue | null): void {
    this.values.set(full, value)
    if (this.values.size <= this.size) return
    const oldest = this.values.keys().next().value
    if (oldest === undefined) return
    this.values.delete(oldest)
    const team = teamOfKey(oldest)
    if (team) this.complete.delete(team)
  }

  /** Whether the team (`<ns>.t.<team>`) is held whole. */
  isComplete(team: string): boolean {
    return this.complete.has(team)
  }

  /** Marks a team as held whole (its keys are remembered right after). */
  markComplete(team: string): void {
    this.complete.add(team)
  }

  /** Whether the team was found too large to load whole. */
  isLarge(team: string): boolean {
    return this.large.has(team)
  }

  /** Remembers that the team is too large to load whole. */
  markLarge(team: string): void {
    this.large.add(team)
  }

  /** Forgets everything. */
  clear(): void {
    this.values.clear()
    this.complete.clear()
    this.large.clear()
  }
}
