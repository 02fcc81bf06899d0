import { type KV, KvWatchInclude } from '@nats-io/kv'
import { BUCKETS } from '../../schema/jetstream.ts'
import { bucket, type NatsConnection } from '../jetstream/connection.ts'
import { createDoc, listDocs, nextSequence, readDoc, updateDoc } from '../jetstream/kv-document.ts'
import { type LogType, PluginConfigDoc, type PluginConfig } from './types.ts'

// Plugin configs in the `burrow_plugin_configs` KV bucket: `c.<team>.<id>` per config and
// `seq.plugin_config` for ids. Writes are revision-checked (kv-doc.ts).

export interface NewPluginConfig {
  plugin: number
  name: string | null
  enabled: boolean
  order?: number
  config: Record<string, unknown>
  log_level: LogType
}

export type PluginConfigChanges = Partial<
  Pick<PluginConfig, 'name' | 'enabled' | 'order' | 'config' | 'log_level' | 'deleted'>
>

const key = (team: number, id: number) => `c.${team}.${id}`

export class PluginConfigStore {
  private constructor(readonly kv: KV) {}

  static async open(nc: NatsConnection): Promise<PluginConfigStore> {
    return new PluginConfigStore(await bucket(nc, BUCKETS.pluginConfigs))
  }

  async create(team: number, userId: number | null, input: NewPluginConfig): Promise<PluginConfig> {
    const id = await nextSequence(this.kv, 'seq.plugin_config')
    // Appended after the project's last step unless placed explicitly.
    const order = input.order ?? Math.max(0, ...(await this.list(team)).map((c) => c.order + 1))
    const now = new Date().toISOString()
    const doc: PluginConfig = PluginConfigDoc.parse({
      ...input,
      id,
      team_id: team,
      order,
      deleted: false,
      created_at: now,
      created_by: userId,
      updated_at: now,
    })
    if (!(await createDoc(this.kv, key(team, id), doc))) throw new Error(`plugin config ${id} exists`)
    return doc
  }

  /** Including soft-deleted configs (their logs stay readable). */
  async get(team: number, id: number): Promise<PluginConfig | undefined> {
    return (await readDoc(this.kv, key(team, id), PluginConfigDoc))?.doc
  }

  /** The team's configs that are not deleted, in pipeline order. */
  async list(team: number): Promise<PluginConfig[]> {
    const all = await listDocs(this.kv, `c.${team}.*`, PluginConfigDoc)
    return all.filter((c) => !c.deleted).sort((a, b) => a.order - b.order || a.id - b.id)
  }

  update(team: number, id: number, changes: PluginConfigChanges): Promise<PluginConfig | undefined> {
    return updateDoc(this.kv, key(team, id), PluginConfigDoc, (current) => {
      if (current.deleted) return current
      return { ...current, ...changes, updated_at: new Date().toISOString() }
    })
  }
}

/**
 * The enabled configs of each team, cached for the projector and dropped from the cache when the
 * bucket changes (a KV watch), so every process sees a config change within moments.
 */
export class PluginConfigCache {
  private readonly byTeam = new Map<number, Promise<PluginConfig[]>>()
  private readonly generation = new Map<number, number>()
  private watcher: { stop(): void } | undefined

  constructor(private readonly store: PluginConfigStore) {}

  async start(): Promise<void> {
    const iter = await this.store.kv.watch({ key: 'c.>', include: KvWatchInclude.UpdatesOnly })
    this.watcher = iter
    void (async () => {
      for await (const e of iter) {
        const team = Number(e.key.split('.')[1])
        this.generation.set(team, (this.generation.get(team) ?? 0) + 1)
        this.byTeam.delete(team)
      }
    })()
  }

  configsFor(team: number): Promise<PluginConfig[]> {
    const cached = this.byTeam.get(team)
    if (cached) return cached
    const gen = this.generation.get(team) ?? 0
    const load = this.store.list(team).then((all) => all.filter((c) => c.enabled))
    this.byTeam.set(team, load)
    load.then(
      // A change that landed while loading makes this result stale: load again next time.
      () => {
        if ((this.generation.get(team) ?? 0) !== gen && this.byTeam.get(team) === load)
          this.byTeam.delete(team)
      },
      () => {
        if (this.byTeam.get(team) === load) this.byTeam.delete(team)
      },
    )
    return load
  }

  stop(): void {
    this.watcher?.stop()
  }
}
