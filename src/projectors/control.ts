import type { JsMsg } from '@nats-io/jetstream'
import { type KV, KvWatchInclude } from '@nats-io/kv'
import type { MessageFeed } from './feed.ts'

// Lets a replay pause the projectors of every process while it swaps tables and identity namespaces:
// `control.pause` holds a token while paused; each lane writes `control.paused.<durable>` = token once
// its in-flight batch is done, and waits. On resume, lanes drop their caches (the namespace may have
// changed under them).

/** The identity-bucket key a replay sets (to a token) to pause the projectors. */
export const PAUSE_KEY = 'control.pause'
/**
 * The identity-bucket key where a replay records, at its swap, the last sequence of the resolved
 * stream `stream` (team spread): messages up to it are of events the swapped-in tables hold.
 */
export const resolvedReplayedKey = (stream: string) => `replay.resolved.${stream}`

/** The resolved stream's last sequence at the last replay's swap (0: none). */
export async function resolvedReplayedUpTo(kv: KV, stream: string): Promise<number> {
  const e = await kv.get(resolvedReplayedKey(stream))
  return e?.operation === 'PUT' && e.length > 0 ? e.json<{ seq: number }>().seq : 0
}

/** The key a lane writes the pause token to once it has paused. */
export const pausedKey = (durable: string) => `control.paused.${durable.replace(/[^A-Za-z0-9_-]/g, '_')}`

const enc = new TextEncoder()

/** Watches the pause key: lanes gate on it between batches. */
export class ProjectorControl {
  token: string | null = null
  private readonly listeners = new Set<() => void>()
  private stopWatch?: () => void

  private constructor(private readonly kv: KV) {}

  static async open(kv: KV, onResume: () => void): Promise<ProjectorControl> {
    const c = new ProjectorControl(kv)
    const current = await kv.get(PAUSE_KEY)
    c.token = current?.operation === 'PUT' && current.length > 0 ? current.string() : null
    const watch = await kv.watch({ key: PAUSE_KEY, include: KvWatchInclude.UpdatesOnly })
    c.stopWatch = () => watch.stop()
    void (async () => {
      for await (const e of watch) {
        const next = e.operation === 'PUT' && e.length > 0 ? e.string() : null
        const resumed = c.token !== null && next === null
        c.token = next
        if (resumed) onResume()
        for (const l of c.listeners) l()
      }
    })().catch(() => undefined)
    return c
  }

  onChange(fn: () => void): () => void {
    this.listeners.add(fn)
    return () => this.listeners.delete(fn)
  }

  /** Called by a lane between batches: acknowledges a pause and waits for the resume. */
  async gate(durable: string, stopping: () => boolean): Promise<void> {
    if (this.token === null) return
    await this.kv.put(pausedKey(durable), enc.encode(this.token))
    while (this.token !== null && !stopping()) {
      await new Promise<void>((r) => {
        const off = this.onChange(() => {
          off()
          r()
        })
        setTimeout(() => {
          off()
          r()
        }, 1000)
      })
    }
  }

  close(): void {
    this.stopWatch?.()
  }
}

/**
 * The pause as one consumer of the projectors (lane consumer, row writer) lives it: a pause or
 * resume wakes its feed, and it takes its next batch only while not paused.
 */
export class PausableFeed {
  private readonly off?: () => void

  constructor(
    private readonly feed: MessageFeed,
    private readonly control: ProjectorControl | undefined,
    private readonly durable: string,
    private readonly stopping: () => boolean,
  ) {
    this.off = control?.onChange(() => feed.poke())
  }

  /** Whether a replay holds the projectors paused now. */
  get paused(): boolean {
    return (this.control?.token ?? null) !== null
  }

  /**
   * The next batch: confirms and waits out a pause first. A batch gathered while a pause began goes
   * back to the front of the queue (it goes first after the resume); empty when stopping or paused.
   */
  async next(): Promise<JsMsg[]> {
    await this.control?.gate(this.durable, this.stopping)
    const batch = await this.feed.next(() => this.stopping() || this.paused)
    if (batch.length > 0 && this.paused) {
      this.feed.queue.unshift(...batch)
      return []
    }
    return batch
  }

  /** Stops waking the feed. */
  close(): void {
    this.off?.()
  }
}
