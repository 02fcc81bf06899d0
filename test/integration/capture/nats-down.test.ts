import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { connectNats } from '../../../src/jetstream/connection.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { stack, startTestBurrow, tempDir } from '../../harness/index.ts'
import { readEvents } from '../../harness/log.ts'

describe('capture while NATS is down', () => {
  const servers: { stop(): Promise<void> }[] = []
  afterAll(async () => {
    for (const s of servers) await s.stop()
  })

  it('answers 503 with Retry-After, never 200, and recovers when NATS is back', async () => {
    // A NATS of this test's own: stopping the shared one would disturb other files.
    const opts = { bin: stack().bins.nats, dataDir: join(tempDir(), 'nats'), port: await freePort() }
    let nats = await startNatsServer(opts)
    const burrow = await startTestBurrow({ NATS_URL: nats.url, CAPTURE_ACK_TIMEOUT_MS: '1000' })
    const token = burrow.credentials.project_api_key
    const send = (name: string) =>
      fetch(`${burrow.url}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ api_key: token, batch: [{ event: name, distinct_id: 'u', properties: {} }] }),
      })

    expect((await send('before')).status).toBe(200)
    await nats.stop()

    const during = await send('during')
    expect(during.status).toBe(503)
    expect(during.headers.get('retry-after')).toMatch(/^\d+$/)
    expect(await during.json()).toMatchObject({ type: 'server_error', code: 'unavailable' })

    nats = await startNatsServer(opts)
    servers.push(nats)
    // the client reconnects on its own; an SDK would retry "during" until it is accepted
    let status = 0
    for (let i = 0; i < 30 && status !== 200; i++) {
      status = (await send('during')).status
      if (status !== 200) await new Promise((r) => setTimeout(r, 500))
    }
    expect(status).toBe(200)
    expect((await send('after')).status).toBe(200)

    const nc = await connectNats(nats.url)
    const names = (await readEvents(nc, burrow.credentials.project_id)).map((e) => e.event)
    await nc.close()
    expect(names).toEqual(['before', 'during', 'after'])
  })
})
