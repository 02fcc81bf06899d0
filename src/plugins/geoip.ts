import { z } from 'zod'
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
    const next = { ...props, ...location }
    if (config.set_person_properties) {
      const initial = Object.fromEntries(
        keys.map((k) => [k.replace(/^\$geoip_/, '$initial_geoip_'), location[k]]),
      )
      next.$set = { ...asObject(props.$set), ...location }
      // What the client set once itself wins over the derived value.
      next.$set_once = { ...initial, ...asObject(props.$set_once) }
    }
    const where = [location.$geoip_city_name, location.$geoip_country_code].filter(Boolean).join(', ')
    ctx.log('DEBUG', `Located ${ip} in ${where || 'unknown place'} (event ${event.uuid})`)
    return { ...event, properties: next }
  },
})

const asObject = (v: unknown): Record<string, unknown> =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {}
