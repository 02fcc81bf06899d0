import type { KV } from '@nats-io/kv'
import { LIVE_NAMESPACE, namespacePointerKey, watermarkKey } from '../identity-keys.ts'

const encoder = new TextEncoder()

/** A JSON document of the bucket, or undefined when absent or deleted. */
export async function readJson<T>(kv: KV, key: string): Promise<T | undefined> {
  const e = await kv.get(key)
  if (!e || e.operation !== 'PUT' || e.length === 0) return undefined
  return e.json<T>()
}

/**
 * The namespace pointers (which identity namespace is current per team) and the watermarks of the
 * sources, read once and then held; this process writes the watermarks it holds.
 */
export class Pointers {
  private readonly namespaces = new Map<number, string>()
  private readonly watermarks = new Map<string, number>()

  /** `fixed`: every team's namespace (replay builds into its own). */
  constructor(
    private readonly kv: KV,
    private readonly fixed?: string,
  ) {}

  /** Forgets what was read (after a replay swapped namespaces). */
  reset(): void {
    this.namespaces.clear()
    this.watermarks.clear()
  }

  /** The team's namespace when already known, without a round trip; undefined otherwise. */
  known(team: number): string | undefined {
    return this.fixed ?? this.namespaces.get(team)
  }

  /** The identity namespace the team's state lives in now. */
  async namespaceOf(team: number): Promise<string> {
    if (this.fixed) return this.fixed
    const known = this.namespaces.get(team)
    if (known) return known
    const pointer =
      (await readJson<{ ns: string }>(this.kv, namespacePointerKey(team))) ??
      (await readJson<{ ns: string }>(this.kv, namespacePointerKey('default')))
    const ns = pointer?.ns ?? LIVE_NAMESPACE
    this.namespaces.set(team, ns)
    return ns
  }

  /** The last stream sequence whose batch `source` committed completely in `ns` (0: none). */
  async watermark(ns: string, source: string): Promise<number> {
    const key = watermarkKey(ns, source)
    const known = this.watermarks.get(key)
    if (known !== undefined) return known
    const seq = (await readJson<{ seq: number }>(this.kv, key))?.seq ?? 0
    this.watermarks.set(key, seq)
    return seq
  }

  /** Writes a watermark (callers only ever move it forward). */
  async setWatermark(ns: string, source: string, seq: number): Promise<void> {
    const key = watermarkKey(ns, source)
    await this.kv.put(key, encoder.encode(JSON.stringify({ seq })))
    this.watermarks.set(key, seq)
  }
}
