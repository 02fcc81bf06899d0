// The allocator options of the clickhouse-server Burrow starts (src/stack/clickhouse-server.ts): the
// process gets them in its environment, its jemalloc accepts every one of them (jemalloc names an
// option it does not know, or a value it rejects, on stderr, which goes to the server's stdout.log),
// and MALLOC_CONF in Burrow's environment replaces them. The server is Debian's 18.16 on both
// flavors' runs: the 26.x tests run libchdb, which Burrow never starts this way.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { afterEach, describe, expect, it } from 'vitest'
import { startClickHouseServer } from '../../../src/stack/clickhouse-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { stack, tempDir } from '../../harness/index.ts'

const environ = (pid: number) =>
  Object.fromEntries(
    readFileSync(`/proc/${pid}/environ`, 'utf8')
      .split('\0')
      .filter(Boolean)
      .map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]),
  )

let stop: (() => Promise<void>) | undefined
const savedConf = process.env.MALLOC_CONF
afterEach(async () => {
  await stop?.()
  stop = undefined
  if (savedConf === undefined) delete process.env.MALLOC_CONF
  else process.env.MALLOC_CONF = savedConf
})

async function start(): Promise<{ env: Record<string, string>; log: string }> {
  const dataDir = tempDir('burrow-ch-alloc-')
  const s = await startClickHouseServer({
    bin: stack().bins.clickhouse,
    dataDir,
    httpPort: await freePort(),
    tcpPort: await freePort(),
  })
  stop = () => s.stop()
  return { env: environ(s.pid), log: readFileSync(join(dataDir, 'log', 'stdout.log'), 'utf8') }
}

describe('the allocator options of the clickhouse-server Burrow starts', () => {
  it('returns freed pages after 1 s, large allocations included, and jemalloc takes every option', async () => {
    delete process.env.MALLOC_CONF
    const { env, log } = await start()
    expect(env.MALLOC_CONF).toBe(
      'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,oversize_threshold:0',
    )
    expect(log).not.toContain('<jemalloc>')
  })

  it('leaves them to MALLOC_CONF in the environment (an option jemalloc rejects is in the log)', async () => {
    process.env.MALLOC_CONF = 'dirty_decay_ms:-1,no_such_option:1'
    const { env, log } = await start()
    expect(env.MALLOC_CONF).toBe('dirty_decay_ms:-1,no_such_option:1')
    expect(log).toContain('<jemalloc>')
    expect(log).toContain('no_such_option')
  })
})
