import type { Logger } from '../observability/logger.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import { PluginRuntime, runPlugins, WebhookDispatcher } from '../plugins/index.ts'
import type { PluginLogSink } from '../plugins/types.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { ProjectionPlugins, TeamPipeline } from './batch.ts'

// The projectors' side of the plugin pipeline (src/plugins): each batch reads a team's configs once,
// so every event of the batch goes through the same steps, and a team without plugins costs one
// cache lookup per batch.

/** Drops deliveries: for events whose row is already written, or a replay of old events. */
class MutedWebhooks extends WebhookDispatcher {
  override send(): void {}
}

const silentLog: PluginLogSink = { write() {} }
const muted = new MutedWebhooks()

/** The projectors' plugin pipelines: each team's configs from the KV-watched cache. */
export class ProjectorPlugins implements ProjectionPlugins {
  private constructor(
    private readonly runtime: PluginRuntime,
    private readonly sideEffects: boolean,
  ) {}

  /**
   * `sideEffects: false` (replay): the plugins still shape the events, but write no log lines and
   * send no webhooks; those happened when the events were first projected.
   */
  static async open(
    deps: { nc: NatsConnection; ch: ClickHouseClient; log?: Logger },
    opts: { sideEffects: boolean } = { sideEffects: true },
  ): Promise<ProjectorPlugins> {
    return new ProjectorPlugins(await PluginRuntime.open(deps), opts.sideEffects)
  }

  /** The team's pipeline with its configs as they are now; undefined when it has none. */
  async forTeam(team: number): Promise<TeamPipeline | undefined> {
    const configs = await this.runtime.cache.configsFor(team)
    if (configs.length === 0) return undefined
    const { logs, webhooks } = this.runtime
    return (event, { quiet }) => {
      const loud = this.sideEffects && !quiet
      return runPlugins(configs, event, loud ? logs : silentLog, { webhooks: loud ? webhooks : muted })
    }
  }

  /** Waits (bounded) for webhook deliveries in flight and flushes the plugin log. */
  stop(): Promise<void> {
    return this.runtime.stop()
  }
}
