import { z } from 'zod'
import { merged, setOwn } from '../property-bags/copies.ts'
import { definePlugin } from './plugin.ts'

// PostHog's GeoIP app: `$geoip_*` on the event from its IP, the same values `$set` on the person
// and `$initial_geoip_*` `$set_once`; skipped when the event carries `$geoip_disable`.

export const geoipPlugin = definePlugin({
  id: 1,
  name: 'geoip',
  description: 'Adds $geoip_* properties (country, city, ...) from the event IP (DB-IP lite database).',
  config: z.object({
    /** also `$set` / `$set_once` the location on the person */
    set_person_properties: z.boolean().default(true),
  }),
  process(event, config, ctx) {
    const props = event.properties
    if (props.$geoip_disable) {
      ctx.log('DEBUG', `Skipped event ${event.uuid}: $geoip_disable is set`)
      return event
    }
    const ip = event.ip ?? (typeof props.$ip === 'string' ? props.$ip : null)
    if (!ip) {
      ctx.log('DEBUG', `Skipped event ${event.uuid}: no IP address`)
      return event
    }
    const location = ctx.geoip(ip)
    const keys = Object.keys(location)
    if (keys.length === 0) {
      ctx.log('DEBUG', `No location known for ${ip} (event ${event.uuid})`)
      return event
    }
    // (merged: every located event added its keys to spread copies, ~1 µs a key on Node 20)
    const next = merged(props, location)
    if (config.set_person_properties) {
      const initial: Record<string, unknown> = {}
      for (const k of keys) setOwn(initial, initialName(k), location[k])
      next.$set = merged(asObject(props.$set), location)
      // What the client set once itself wins over the derived value.
      next.$set_once = merged(initial, asObject(props.$set_once))
    }
    const where = [location.$geoip_city_name, location.$geoip_country_code].filter(Boolean).join(', ')
    ctx.log('DEBUG', `Located ${ip} in ${where || 'unknown place'} (event ${event.uuid})`)
    return { ...event, properties: next }
  },
})

// `$initial_geoip_*` names, made once per name rather than by a regex per event and key
const initialNames = new Map<string, string>()
function initialName(key: string): string {
  let name = initialNames.get(key)
  if (name === undefined) {
    name = key.replace(/^\$geoip_/, '$initial_geoip_')
    initialNames.set(key, name)
  }
  return name
}

const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
