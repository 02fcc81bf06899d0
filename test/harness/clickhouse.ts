// The ClickHouse the suite runs against: the embedded server `npm start` runs (a current release,
// src/stack/clickhouse-server.ts, with ClickHouse's own listeners). Each vitest project's
// globalSetup starts one; tests that need a ClickHouse of their own (to stop or kill it) start
// another here. A second release is not run yet: the chdb builds npm carries before 26.7 cannot
// start listeners, and their Node addon needs a newer libstdc++ than Debian 12's (docs/operations.md,
// "The embedded ClickHouse").
import { join } from 'node:path'
import { clickhouseLibrary } from '../../src/stack/clickhouse-library.ts'
import { startClickHouseServer } from '../../src/stack/clickhouse-server.ts'
import { freePort } from '../../src/stack/ports.ts'

/** The release a project runs (its integration project is `clickhouse-<flavor>`). */
export type ClickHouseFlavor = '26.7'

/** A ClickHouse server a test owns: restartable on the same port and data, or killed as a crash would. */
export interface OwnClickHouse {
  url: string
  pid: number
  stop(): Promise<void>
  kill(): void
}

/** Picks ports once, so `start()` after `stop()`/`kill()` comes back on the same URL and data. */
export async function ownClickHouse(o: { dataDir: string }): Promise<() => Promise<OwnClickHouse>> {
  const opts = {
    library: await clickhouseLibrary(),
    dataDir: o.dataDir,
    httpPort: await freePort(),
    tcpPort: await freePort(),
  }
  return async () => {
    const s = await startClickHouseServer(opts)
    return { url: s.url, pid: s.pid, stop: () => s.stop(), kill: () => s.kill() }
  }
}

/** Starts the run's shared server below `dir`. */
export async function startSharedClickHouse(dir: string) {
  const start = await ownClickHouse({ dataDir: join(dir, 'clickhouse') })
  return start()
}
