// Plugins: per-project pipeline steps the projector runs over each event before it is written.
// `runPlugins` is the pipeline; `PluginRuntime` bundles what a projector process needs to call it.
import type { Logger } from '../observability/logger.ts'
import type { NatsConnection } from '../jetstream/connection.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import { PluginLogWriter } from './log-writer.ts'
import { defaultWebhooks, runPlugins } from './pipeline.ts'
import { PluginConfigCache, PluginConfigStore } from './config-store.ts'
import type { PluginEvent } from './types.ts'
import { WebhookDispatcher } from './webhook-dispatcher.ts'

export { BUILTIN_PLUGINS, pluginById, pluginByName } from './builtins.ts'
export { fetchPluginLogs } from './log-query.ts'
export { INSTANCE_ID, PluginLogWriter } from './log-writer.ts'
export { defaultWebhooks, type PipelineDeps, runPlugins } from './pipeline.ts'
export { PluginConfigCache, PluginConfigStore } from './config-store.ts'
export * from './types.ts'
export { WebhookDispatcher } from './webhook-dispatcher.ts'

/**
 * For a projector: `await plugins.run(event)` returns the event to write (or null if dropped).
 * Configs are cached per team and refreshed on change; log lines are batched into ClickHouse;
 * webhook deliveries run in the background and are drained by `stop()`.
 */
export class PluginRuntime {
  private constructor(
    readonly cache: PluginConfigCache,
    readonly logs: PluginLogWriter,
    readonly webhooks: WebhookDispatcher,
  ) {}

  static async open(deps: {
    nc: NatsConnection
    ch: ClickHouseClient
    log?: Logger
  }): Promise<PluginRuntime> {
    const cache = new PluginConfigCache(await PluginConfigStore.open(deps.nc))
    await cache.start()
    return new PluginRuntime(cache, new PluginLogWriter(deps.ch, { log: deps.log }), defaultWebhooks)
  }

  async run<E extends PluginEvent>(event: E): Promise<E | null> {
    const configs = await this.cache.configsFor(event.team_id)
    if (configs.length === 0) return event
    return runPlugins(configs, event, this.logs, { webhooks: this.webhooks })
  }

  /** Waits up to `timeoutMs` for webhook deliveries, then flushes the log. */
  async stop(timeoutMs = 5000): Promise<void> {
    this.cache.stop()
    await Promise.race([this.webhooks.idle(), new Promise((r) => setTimeout(r, timeoutMs).unref())])
    await this.logs.close()
  }
}
