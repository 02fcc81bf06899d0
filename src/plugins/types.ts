import { z } from 'zod'

// The shapes shared by the plugin pipeline, its config store and its log.

/** What a plugin sees of an event: the fields of a captured event it may read or change. */
export interface PluginEvent {
  uuid: string
  event: string
  distinct_id: string
  team_id: number
  timestamp: string
  properties: Record<string, unknown>
  /** the client address capture stamped; `properties.$ip` is used when absent */
  ip?: string | null
}

// PostHog's values (posthog/models/plugin.py: PluginLogEntrySource, PluginLogEntryType).
export const LOG_SOURCES = ['SYSTEM', 'PLUGIN', 'CONSOLE'] as const
export const LOG_TYPES = ['DEBUG', 'LOG', 'INFO', 'WARN', 'ERROR'] as const
export type LogSource = (typeof LOG_SOURCES)[number]
export type LogType = (typeof LOG_TYPES)[number]

/** A log line before the writer stamps id, timestamp and instance id. */
export interface LogInput {
  team_id: number
  plugin_id: number
  plugin_config_id: number
  source: LogSource
  type: LogType
  message: string
}

/** Where plugins write their log lines; the ClickHouse writer batches them. */
export interface PluginLogSink {
  write(entry: LogInput): void
}

export interface LogEntry extends LogInput {
  id: string
  /** ISO 8601 with milliseconds */
  timestamp: string
  instance_id: string
}

export const PluginConfigDoc = z.object({
  id: z.number().int(),
  team_id: z.number().int(),
  /** id of a built-in plugin (src/plugins/builtins.ts) */
  plugin: z.number().int(),
  name: z.string().nullable(),
  enabled: z.boolean(),
  /** run order within the project; ties by id */
  order: z.number().int(),
  config: z.record(z.string(), z.unknown()),
  /** lines below this level are not written */
  log_level: z.enum(LOG_TYPES),
  deleted: z.boolean(),
  created_at: z.string(),
  created_by: z.number().int().nullable(),
  updated_at: z.string(),
})
export type PluginConfig = z.infer<typeof PluginConfigDoc>
