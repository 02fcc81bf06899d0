import { type KV, KvWatchInclude } from '@nats-io/kv'

// Lets a replay pause the projectors of every process while it swaps tables and identity namespaces:
// `control.pause` holds a token while paused; each lane writes `control.paused.<durable>` = token once
// its in-flight batch is done, and waits. On resume, lanes drop their caches (the namespace may have
// changed under them).

/** The identity-bucket key a replay sets (to a token) to pause the projectors. */
export const PAUSE_KEY = 'control.pause'
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
