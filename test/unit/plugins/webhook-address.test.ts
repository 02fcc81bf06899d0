import { describe, expect, it } from 'vitest'
import { blockedReason } from '../../../src/plugins/webhook-dispatcher.ts'

// Which addresses a webhook may reach. The blocked list comes from the IANA special-purpose
// registries (RFC 6890 and successors) and the attempts of issue 22.

describe('webhook destination addresses', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['192.168.0.1', 'private'],
    ['169.254.169.254', 'link-local (cloud metadata)'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['0.0.0.0', 'unspecified'],
    ['192.0.0.192', 'IETF protocol assignments 192.0.0.0/24'],
    ['192.0.0.8', 'IETF protocol assignments 192.0.0.0/24'],
    ['198.18.0.1', 'benchmarking'],
    ['203.0.113.7', 'documentation'],
    ['224.0.0.1', 'multicast'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
    ['::1', 'IPv6 loopback'],
    ['::', 'IPv6 unspecified'],
    ['::ffff:127.0.0.1', 'IPv4-mapped loopback'],
    ['::ffff:8.8.8.8', 'IPv4-mapped, even of a public address'],
    ['::7f00:1', 'IPv4-compatible ::127.0.0.1'],
    ['::a9fe:a9fe', 'IPv4-compatible ::169.254.169.254'],
    ['64:ff9b::7f00:1', 'NAT64 of 127.0.0.1'],
    ['64:ff9b:1::a00:1', 'local-use NAT64'],
    ['2002:7f00:1::1', '6to4 of 127.0.0.1'],
    ['2001::1', 'Teredo'],
    ['fd00::1', 'unique local'],
    ['fe80::1', 'link-local'],
    ['fec0::1', 'site-local'],
    ['ff02::1', 'multicast'],
    ['2001:db8::1', 'documentation'],
    ['100::1', 'discard-only'],
  ])('refuses %s (%s)', (address) => {
    expect(blockedReason(address)).not.toBeNull()
  })

  it.each(['8.8.8.8', '1.1.1.1', '93.184.216.34', '2606:4700:4700::1111', '2a00:1450:4001:80b::200e'])(
    'allows the public unicast address %s',
    (address) => {
      expect(blockedReason(address)).toBeNull()
    },
  )

  it('refuses what is not an address', () => {
    expect(blockedReason('localhost')).not.toBeNull()
    expect(blockedReason('')).not.toBeNull()
  })
})
