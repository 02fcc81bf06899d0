import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { LogType } from '../../../src/plugins/types.ts'
import { type Delivery, type Resolver, WebhookDispatcher } from '../../../src/plugins/webhook-dispatcher.ts'

// The attempts of issue 22 against real sockets: a victim server on loopback stands for the
// embedded ClickHouse (which runs any `?query=`); every test asserts it never hears a thing.

let victim: Server
let victimPort: number
const victimHits: string[] = []
let redirector: Server
let redirectorUrl: string

function listen(server: Server): Promise<number> {
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  )
}

beforeAll(async () => {
  victim = createServer((req, res) => {
    victimHits.push(`${req.method} ${req.url}`)
    req.resume()
    res.end('ok')
  })
  victimPort = await listen(victim)
  // answers each status named in its path with a Location on the victim
  redirector = createServer((req, res) => {
    req.resume()
    const status = Number(/\/(\d{3})/.exec(req.url ?? '')?.[1] ?? 302)
    res.writeHead(status, { location: `http://127.0.0.1:${victimPort}/?query=DROP%20TABLE%20events` }).end()
  })
  redirectorUrl = `http://127.0.0.1:${await listen(redirector)}`
})

afterAll(async () => {
  await new Promise((r) => victim.close(r))
  await new Promise((r) => redirector.close(r))
})

function delivery(url: string, overrides: Partial<Delivery> = {}) {
  const lines: { type: LogType; message: string }[] = []
  const d: Delivery = {
    url,
    body: { event: 'x' },
    headers: {},
    maxAttempts: 1,
    initialBackoffMs: 1,
    timeoutMs: 2000,
    label: 'event e1 (x)',
    log: (type, message) => lines.push({ type, message }),
    ...overrides,
  }
  return { d, lines }
}

async function run(dispatcher: WebhookDispatcher, d: Delivery) {
  dispatcher.send(d)
  await dispatcher.idle()
}

describe('webhook SSRF guards', () => {
  it('never follows a redirect, whatever the status, even where private addresses are allowed', async () => {
    const open = new WebhookDispatcher(10, true)
    for (const status of [301, 302, 303, 307, 308]) {
      const { d, lines } = delivery(`${redirectorUrl}/${status}`, { maxAttempts: 3 })
      await run(open, d)
      expect(
        lines.map((l) => l.type),
        String(status),
      ).toEqual(['ERROR'])
      expect(lines[0]!.message).toContain(`HTTP ${status} (redirects are not followed)`)
    }
    expect(victimHits).toEqual([])
  })

  it('checks the address the connection uses: a rebinding resolver gains nothing', async () => {
    // First answer public (unreachable here), every later one loopback: a check-then-connect
    // guard that resolves twice would pass the check and connect to the victim.
    let calls = 0
    const flipping: Resolver = async () =>
      calls++ % 2 === 0 ? [{ address: '1.2.3.4', family: 4 }] : [{ address: '127.0.0.1', family: 4 }]
    const dispatcher = new WebhookDispatcher(10, false, flipping)
    const { d, lines } = delivery(`http://rebind.example:${victimPort}/`, { maxAttempts: 2, timeoutMs: 300 })
    await run(dispatcher, d)
    expect(victimHits).toEqual([])
    // one lookup per attempt: the answer checked is the answer connected to
    expect(calls).toBe(2)
    expect(lines.at(-1)!.type).toBe('ERROR')
    expect(lines.at(-1)!.message).toContain('resolves to 127.0.0.1')
  })

  it('refuses a name when any of its addresses is not public', async () => {
    const mixed: Resolver = async () => [
      { address: '8.8.8.8', family: 4 },
      { address: '::ffff:127.0.0.1', family: 6 },
    ]
    const { d, lines } = delivery(`http://mixed.example:${victimPort}/`, { maxAttempts: 3 })
    await run(new WebhookDispatcher(10, false, mixed), d)
    expect(lines.map((l) => l.type)).toEqual(['ERROR'])
    expect(lines[0]!.message).toContain('::ffff:127.0.0.1')
    expect(victimHits).toEqual([])
  })

  it('fails closed when the lookup fails or finds nothing', async () => {
    const failing: Resolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND nowhere.example'), { code: 'ENOTFOUND' })
    }
    const empty: Resolver = async () => []
    for (const resolver of [failing, empty]) {
      const { d, lines } = delivery(`http://nowhere.example:${victimPort}/`, { maxAttempts: 2 })
      await run(new WebhookDispatcher(10, false, resolver), d)
      expect(lines.map((l) => l.type)).toEqual(['WARN', 'ERROR'])
      expect(lines[1]!.message).toMatch(/ENOTFOUND|no address/)
    }
    expect(victimHits).toEqual([])
  })

  it('refuses literal special-purpose addresses in the URL before connecting', async () => {
    const dispatcher = new WebhookDispatcher(10, false)
    for (const host of [
      '127.0.0.1',
      '[::1]',
      '[::127.0.0.1]',
      '[::169.254.169.254]',
      '[::ffff:127.0.0.1]',
      '[64:ff9b::127.0.0.1]',
      '192.0.0.192',
      '0.0.0.0',
    ]) {
      const { d, lines } = delivery(`http://${host}:${victimPort}/`, { maxAttempts: 3 })
      await run(dispatcher, d)
      expect(
        lines.map((l) => l.type),
        host,
      ).toEqual(['ERROR'])
      expect(lines[0]!.message, host).toContain('not a public address')
    }
    expect(victimHits).toEqual([])
  })

  it('delivers to the resolved address when private networks are allowed', async () => {
    const local: Resolver = async () => [{ address: '127.0.0.1', family: 4 }]
    const { d, lines } = delivery(`http://hooks.internal:${victimPort}/deliver`)
    await run(new WebhookDispatcher(10, true, local), d)
    expect(lines.map((l) => l.type)).toEqual(['DEBUG'])
    expect(victimHits).toEqual(['POST /deliver'])
    victimHits.length = 0
  })
})
