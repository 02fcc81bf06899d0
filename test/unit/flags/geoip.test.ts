import { describe, expect, it } from 'vitest'
import { clientAddress, lookupGeoip } from '../../../src/geoip/index.ts'

// Expected places come from the DB-IP lite city records of these addresses (read with the mmdb
// reader when the test was written) and countries-list's names for their country codes.

describe('lookupGeoip', () => {
  it('gives PostHog $geoip_* properties for an IPv4 address', () => {
    expect(lookupGeoip('8.8.8.8')).toEqual({
      $geoip_city_name: 'Mountain View',
      $geoip_country_name: 'United States',
      $geoip_country_code: 'US',
      $geoip_continent_name: 'North America',
      $geoip_continent_code: 'NA',
      $geoip_subdivision_1_name: 'California',
      $geoip_latitude: expect.closeTo(37.422, 3),
      $geoip_longitude: expect.closeTo(-122.085, 3),
    })
    expect(lookupGeoip('81.2.69.142')).toMatchObject({
      $geoip_city_name: 'London',
      $geoip_country_name: 'United Kingdom',
      $geoip_continent_code: 'EU',
    })
  })

  it('reads IPv6 and IPv4-mapped addresses', () => {
    expect(lookupGeoip('2001:4860:4860::8888')).toMatchObject({ $geoip_country_code: 'CA' })
    expect(lookupGeoip('::ffff:8.8.8.8')).toMatchObject({ $geoip_country_code: 'US' })
    expect(lookupGeoip('8.8.8.8:443')).toMatchObject({ $geoip_country_code: 'US' })
  })

  it('gives nothing for private, loopback or invalid addresses', () => {
    for (const ip of ['127.0.0.1', '10.1.2.3', '::1', 'garbage', '', null, undefined]) {
      expect(lookupGeoip(ip), String(ip)).toEqual({})
    }
  })
})

describe('clientAddress', () => {
  it('prefers the first X-Forwarded-For entry over the peer', () => {
    expect(clientAddress('1.2.3.4, 10.0.0.1', '127.0.0.1')).toBe('1.2.3.4')
    expect(clientAddress(['5.6.7.8'], '127.0.0.1')).toBe('5.6.7.8')
    expect(clientAddress(undefined, '127.0.0.1')).toBe('127.0.0.1')
    expect(clientAddress(' ', undefined)).toBeNull()
  })
})
