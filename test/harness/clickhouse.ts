// The two ClickHouse servers the suite runs against: Debian's clickhouse-server 18.16 and a current
// release (26.x, chdb behind the HTTP test server in ./chdb). Each vitest project picks one flavor;
// tests that need a ClickHouse of their own (to stop or kill it) start one of the run's flavor here.
import { join } from 'node:path'
import { startClickHouseServer } from '../../src/stack/clickhouse-server.ts'
import { freePort } from '../../src/stack/ports.ts'
import { startChdbServer } from './chdb/index.ts'

/** `18.16`: Debian's clickhouse-server; `26`: chdb (ClickHouse 26.x) behind ./chdb/server.ts. */
export type ClickHouseFlavor = '18.16' | '26'

/** A ClickHouse server a test owns: restartable on the same port and data, or killed as a crash would. */
export interface OwnClickHouse {
  url: string
  pid: number
  stop(): Promise<void>
  kill(): void
}

export interface ClickHouseOptions {
  flavor: ClickHouseFlavor
  /** the 18.16 server binary (unused for chdb) */
  bin: string
  dataDir: string
}

/** Picks ports once, so `start()` after `stop()`/`kill()` comes back on the same URL and data. */
export async function ownClickHouse(o: ClickHouseOptions): Promise<() => Promise<OwnClickHouse>> {
  if (o.flavor === '26') {
    const port = await freePort()
    return async () => {
      const s = await startChdbServer({ dataDir: o.dataDir, port })
      return { url: s.url, pid: s.pid, stop: s.stop, kill: () => process.kill(s.pid, 'SIGKILL') }
    }
  }
  const opts = { bin: o.bin, dataDir: o.dataDir, httpPort: await freePort(), tcpPort: await freePort() }
  return async () => {
    const s = await startClickHouseServer(opts)
    return { url: s.url, pid: s.pid, stop: () => s.stop(), kill: () => s.kill() }
  }
}

/** Starts the run's shared server of `flavor` below `dir`. */
export async function startSharedClickHouse(flavor: ClickHouseFlavor, bin: string, dir: string) {
  const start = await ownClickHouse({ flavor, bin, dataDir: join(dir, 'clickhouse') })
  return start()
}
