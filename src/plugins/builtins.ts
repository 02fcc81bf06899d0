import { geoipPlugin } from './geoip.ts'
import type { BuiltinPlugin } from './plugin.ts'
import { propertyFilterPlugin } from './property-filter.ts'
import { webhookPlugin } from './webhook.ts'

/** The plugins a config can name, by id (PostHog's `plugin` field is an integer id too). */
export const BUILTIN_PLUGINS: readonly BuiltinPlugin[] = [geoipPlugin, propertyFilterPlugin, webhookPlugin]

export const pluginById = (id: number) => BUILTIN_PLUGINS.find((p) => p.id === id)
export const pluginByName = (name: string) => BUILTIN_PLUGINS.find((p) => p.name === name)
