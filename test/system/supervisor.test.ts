import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'
import { selectRows } from '../../src/clickhouse/client.ts'
import { processAlive, sharedServersEnv, spawnBurrow } from '../harness/cli.ts'
import { clickhouse } from '../harness/index.ts'

describe('burrow start (role all) on two cores', () => {
  it(
    'projects in a child process, and one SIGINT runs the named shutdown steps in order',
    { timeout: 240_000 },
    async () => {
      const env = await sharedServersEnv({ LOG_LEVEL: 'info' })
      const { DATA_DIR: dataDir, PORT: port } = env
      const burrow = spawnBurrow(['start'], env)
      await burrow.waitFor(/Burrow listening on/, 120_000)
      const started = /"pid":(\d+)[^\n]*"msg":"projector process started"/.exec(burrow.output())
      expect(started).not.toBeNull()
      const child = Number(started![1])
      expect(processAlive(child)).toBe(true)

      // The child is the projector: an event sent to the parent's capture reaches ClickHouse.
      const creds = JSON.parse(readFileSync(join(dataDir, 'local-credentials.json'), 'utf8'))
      const uuid = crypto.randomUUID()
      const res = await fetch(`http://127.0.0.1:${port}/batch/`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          api_key: creds.project_api_key,
          batch: [{ event: 'two cores', distinct_id: 'sup-1', uuid, properties: {} }],
        }),
      })
      expect(res.status).toBe(200)
      const ch = clickhouse()
      await expect
        .poll(
          async () =>
            (
              await selectRows<{ n: string }>(
                ch,
                `SELECT toString(count()) AS n FROM events WHERE uuid = '${uuid}'`,
              )
            )[0]?.n,
          { timeout: 60_000, interval: 500 },
        )
        .toBe('1')

      // the parent's /metrics includes the projector process's (rows it inserted); the row can be
      // read a moment before the child's counter has it, so the figure is polled
      await expect
        .poll(async () => (await fetch(`http://127.0.0.1:${port}/metrics`)).text(), {
          timeout: 15_000,
          interval: 250,
        })
        .toMatch(/burrow_clickhouse_insert_rows_total\{table="events"\} [1-9]/)

      burrow.child.kill('SIGINT')
      expect(await burrow.exited).toBe(0)
      // the parent's steps (the child, role projector, logs its own into the same output)
      const stepsOf = (role: string) =>
        [...burrow.output().matchAll(/"step":"([^"]+)","role":"(\w+)"[^\n]*"msg":"shutdown step"/g)]
          .filter((m) => m[2] === role)
          .map((m) => m[1])
      const steps = stepsOf('all')
      expect(steps).toEqual([
        'drain',
        'http',
        'background work',
        'projector process',
        'consumer lag metric',
        'clickhouse shards',
        'clickhouse queries',
        'accounts mirror',
        'clickhouse',
        'nats',
        'embedded servers',
      ])
      // the child ran its own clean shutdown, then was gone
      expect(stepsOf('projector')).toContain('nats')
      expect(processAlive(child)).toBe(false)
    },
  )

  it('leaves no projector behind when the parent is SIGKILLed', { timeout: 240_000 }, async () => {
    const env = await sharedServersEnv({ LOG_LEVEL: 'info' })
    const burrow = spawnBurrow(['start'], env)
    await burrow.waitFor(/Burrow listening on/, 120_000)
    const child = Number(/"pid":(\d+)[^\n]*"msg":"projector process started"/.exec(burrow.output())![1])
    expect(processAlive(child)).toBe(true)
    burrow.child.kill('SIGKILL')
    await burrow.exited
    // the child notices its supervisor's IPC channel closing and exits by itself
    await expect.poll(() => processAlive(child), { timeout: 15_000, interval: 200 }).toBe(false)
  })
})
