import { join } from 'node:path'
import { afterAll, describe, expect, it } from 'vitest'
import { privateClickHouse, startTestBurrow, tempDir } from '../../harness/index.ts'

describe('/_health', () => {
  const started: { stop(): Promise<void> }[] = []
  afterAll(async () => {
    for (const s of started) await s.stop()
  })

  it('answers 503 naming ClickHouse while it is stopped, and 200 again when it is back', async () => {
    // A ClickHouse of this test's own: stopping the shared one would disturb other files.
    const startClickHouse = await privateClickHouse(join(tempDir(), 'ch'))
    let ch = await startClickHouse()
    const burrow = await startTestBurrow({ CLICKHOUSE_URL: ch.url })
    const health = () =>
      fetch(`${burrow.url}/_health`).then(async (r) => ({ status: r.status, body: await r.json() }))

    expect((await health()).status).toBe(200)
    await ch.stop()
    const down = await health()
    expect(down.status).toBe(503)
    expect(down.body.detail).toMatch(/clickhouse/)
    expect(down.body.dependencies.clickhouse.status).toBe('down')
    expect(down.body.dependencies.nats.status).toBe('ok')

    ch = await startClickHouse()
    started.push(ch)
    expect((await health()).status).toBe(200)
  })
})
