// Free ports below the ephemeral range (src/stack/ports.ts): an outgoing connection can never be
// given one of them while a server is between picking and binding it.
import { createServer, type Server } from 'node:net'
import { afterEach, describe, expect, it } from 'vitest'
import { ephemeralLow, freePort } from '../../../src/stack/ports.ts'

const open: Server[] = []
afterEach(async () => {
  await Promise.all(open.splice(0).map((s) => new Promise((r) => s.close(r))))
})

const listen = (port: number) =>
  new Promise<Server>((resolve, reject) => {
    const s = createServer()
    s.once('error', reject)
    s.listen(port, '127.0.0.1', () => resolve(s))
  })

describe('freePort', () => {
  it('gives ports below the ephemeral range that a server can bind at once', async () => {
    const low = ephemeralLow()
    for (let i = 0; i < 20; i++) {
      const port = await freePort()
      expect(port).toBeGreaterThanOrEqual(10_000)
      expect(port).toBeLessThan(low)
      open.push(await listen(port))
    }
  })

  it('never gives a port a server listens on', async () => {
    const taken = new Set<number>()
    for (let i = 0; i < 30; i++) {
      const port = await freePort()
      expect(taken.has(port)).toBe(false)
      taken.add(port)
      open.push(await listen(port))
    }
  })

  it("reads the OS's ephemeral range where it has one", () => {
    expect(ephemeralLow()).toBeGreaterThan(1024)
  })
})
