import { lookupGeoip } from '../geoip/index.ts'
import { pluginById } from './builtins.ts'
import type { PluginContext } from './plugin.ts'
import { LOG_TYPES, type LogType, type PluginConfig, type PluginEvent, type PluginLogSink } from './types.ts'
import { WebhookDispatcher } from './webhook-dispatcher.ts'

export interface PipelineDeps {
  webhooks: WebhookDispatcher
  geoip: (ip: string) => Record<string, unknown>
}

/** One dispatcher per process unless the caller brings its own (tests, shutdown draining). */
export const defaultWebhooks = new WebhookDispatcher()

const defaults: PipelineDeps = { webhooks: defaultWebhooks, geoip: lookupGeoip }

// Parsed (defaulted) plugin settings per config object: configs come from a cache and stay the
// same objects until they change, so each is validated once, not once per event.
const parsed = new WeakMap<PluginConfig, unknown>()

const rank = (t: LogType) => LOG_TYPES.indexOf(t)

/**
 * Runs a project's enabled plugin configs over one event, in `order` (then id), and returns the
 * event to store. The input event is never mutated. A plugin that throws, or whose settings are
 * invalid, is logged as an ERROR line of its config and skipped: the event continues as it was
 * before that plugin, the way PostHog's plugin server treats a failing plugin. Returns null only
 * if a plugin dropped the event (none of the built-ins does).
 */
export async function runPlugins<E extends PluginEvent>(
  configs: readonly PluginConfig[],
  event: E,
  log: PluginLogSink,
  deps: Partial<PipelineDeps> = {},
): Promise<E | null> {
  const { webhooks, geoip } = { ...defaults, ...deps }
  let current: E = event
  const steps = configs
    .filter((c) => c.enabled && !c.deleted && c.team_id === event.team_id)
    .sort((a, b) => a.order - b.order || a.id - b.id)
  for (const c of steps) {
    const write = (type: LogType, message: string) => {
      if (rank(type) < rank(c.log_level)) return
      log.write({
        team_id: c.team_id,
        plugin_id: c.plugin,
        plugin_config_id: c.id,
        source: 'PLUGIN',
        type,
        message,
      })
    }
    const plugin = pluginById(c.plugin)
    if (!plugin) {
      write('ERROR', `Unknown plugin ${c.plugin}; skipped`)
      continue
    }
    let settings = parsed.get(c)
    if (settings === undefined) {
      const r = plugin.config.safeParse(c.config)
      if (!r.success) {
        write('ERROR', `Invalid config: ${r.error.issues[0]?.message ?? 'invalid'}; skipped`)
        continue
      }
      settings = r.data
      parsed.set(c, settings)
    }
    const ctx: PluginContext = { log: write, webhooks, geoip }
    try {
      const out = await plugin.process(current, settings, ctx)
      if (out === null) return null
      // Plugins see and return the shared fields; the caller's other fields ride along.
      current = { ...current, ...out }
    } catch (err) {
      write(
        'ERROR',
        `Error processing event ${event.uuid}: ${err instanceof Error ? err.message : String(err)}`,
      )
    }
  }
  return current
}
