import { execFileSync } from 'node:child_process'
import { describe, expect, it } from 'vitest'

// In a fresh process (the unit tests share one, where other tests have read the databases):
// Node's count of ArrayBuffer bytes after local lookups, then after a public IPv4 lookup. The
// IPv4 file is 63,069,790 bytes, so reading it shows as at least 60 MB more.
const script = `
  import { lookupGeoip } from './src/geoip/index.ts'
  const local = ['127.0.0.1', '10.1.2.3', '192.168.0.7', '169.254.3.4', '::1', 'fd00::5', 'fe80::1', '0.0.0.0']
  const empty = local.every((ip) => Object.keys(lookupGeoip(ip)).length === 0)
  const before = process.memoryUsage().arrayBuffers
  const country = lookupGeoip('8.8.8.8').$geoip_country_code
  console.log(JSON.stringify({ empty, before, after: process.memoryUsage().arrayBuffers, country }))
`

describe('lookupGeoip reads a database only when an address can be in it', () => {
  it('local addresses leave the 63 MB IPv4 database unread; a public one reads it', () => {
    const out = execFileSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: new URL('../../..', import.meta.url),
      encoding: 'utf8',
    })
    const r = JSON.parse(out.trim().split('\n').at(-1)!) as {
      empty: boolean
      before: number
      after: number
      country: string
    }
    expect(r.empty).toBe(true)
    expect(r.country).toBe('US')
    expect(r.before).toBeLessThan(20_000_000)
    expect(r.after - r.before).toBeGreaterThan(60_000_000)
  })
})
