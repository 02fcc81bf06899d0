import type { KV } from '@nats-io/kv'
import { scanPrefix } from '../kv-scan.ts'
import type { StateCache } from './cache.ts'
import type { CommitLog, StoredValue } from './commit-protocol.ts'
import type { StateValue } from './reads.ts'

const decoder = new TextDecoder()

/**
 * Loads a team's whole state into the cache in one scan of the bucket the first time the team is
 * seen, when it has at most `max` keys; later reads of its keys, present or absent, cost no round trip.
 * One scan per team at a time; a scan that overlapped a commit is thrown away (keys are then read one
 * by one).
 */
export class TeamLoader {
  private readonly loading = new Map<string, Promise<void>>()

  constructor(
    private readonly kv: KV,
    private readonly cache: StateCache,
    private readonly commits: CommitLog,
    private readonly max: number,
    /** what a reader sees of a stored value of `full` */
    private readonly visible: (full: string, stored: StoredValue | undefined) => Promise<StateValue | null>,
  ) {}

  /** Makes `team` (`<ns>.t.<team>`) complete in the cache when it is small enough; idempotent. */
  async load(team: string): Promise<void> {
    if (this.max <= 0 || this.cache.isComplete(team) || this.cache.isLarge(team)) return
    let loading = this.loading.get(team)
    if (!loading) {
      loading = this.scan(team).finally(() => this.loading.delete(team))
      this.loading.set(team, loading)
    }
    await loading
  }

  private async scan(team: string): Promise<void> {
    const gen = this.commits.generation
    const found = await scanPrefix(this.kv, team, this.max)
    if (!found) {
      this.cache.markLarge(team)
      return
    }
    const values: [string, StateValue | null][] = []
    for (const [full, data] of found) {
      const stored = data === null ? undefined : (JSON.parse(decoder.decode(data)) as StoredValue)
      values.push([full, await this.visible(full, stored)])
    }
    if (this.commits.wentStale(gen, undefined)) return
    // Complete first: should one of these very keys be evicted on the way, remember() takes it back.
    this.cache.markComplete(team)
    for (const [full, value] of values) if (!this.cache.has(full)) this.cache.remember(full, value)
  }
}
