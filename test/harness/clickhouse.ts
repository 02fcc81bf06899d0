// The ClickHouse the suite runs against: the embedded server `npm start` runs (chdb's library run as
// a real server with ClickHouse's own listeners, src/stack/clickhouse-server.ts). Each vitest
// project's globalSetup starts one of its flavor; tests that need a ClickHouse of their own (to stop
// or kill it) start another of the same flavor here.
//
// Which second build (issue 39; docs/operations.md, "Which release"): npm carries chdb's library for
// two ClickHouse releases, 26.5.1.1 (builds 26.5.0 to 26.5.3) and 26.7.2.1 (builds 26.7.0-stable.1
// and 26.7.3-stable.1). Every 26.5 build refuses `SYSTEM START LISTEN` ("not supported in
// clickhouse-local"), rejects `--http_port`/`--tcp_port`/`--listen_host`, ignores the config's
// `<http_port>`/`<tcp_port>` (nothing listens), and exports no server entry point: it cannot be a
// server with ClickHouse's own listeners, and a front of our own over the library would not be what
// users run. So the second flavor is the other 26.7 build, 26.7.0-stable.1: the same ClickHouse
// source (26.7.2.1, VERSION_GITHASH a6156303) in chdb's build of 2026-08-12 instead of 2026-09-10,
// so it checks chdb's server wrapper (entry point, listeners, shutdown) and not a second SQL engine.
// When npm carries a newer release, `npm start`'s build moves to it and 26.7.3-stable.1 becomes
// the second flavor here: then the suite runs two releases.
import { join } from 'node:path'
import { CLICKHOUSE_LIB_VERSION, clickhouseLibrary } from '../../src/stack/clickhouse-library.ts'
import { startClickHouseServer } from '../../src/stack/clickhouse-server.ts'
import { freePort } from '../../src/stack/ports.ts'

/**
 * The chdb build each flavor runs (npm's `@chdb/lib-<platform>` version). A project's integration
 * project is `clickhouse-<flavor>`; `stack().clickhouse.version` is the release's `version()`.
 */
export const CLICKHOUSE_BUILDS = {
  /** the build `npm start` runs (package.json carries it) */
  '26.7': CLICKHOUSE_LIB_VERSION,
  /** installed on first use into Burrow's cache (~540 MB unpacked, ~12 s from the registry here) */
  '26.7.0': '26.7.0-stable.1',
} as const

/** The build a project runs (its integration project is `clickhouse-<flavor>`). */
export type ClickHouseFlavor = keyof typeof CLICKHOUSE_BUILDS

/** A ClickHouse server a test owns: restartable on the same port and data, or killed as a crash would. */
export interface OwnClickHouse {
  url: string
  pid: number
  stop(): Promise<void>
  kill(): void
}

/** The path of `flavor`'s libchdb, installed first when the machine does not have it yet. */
export async function flavorLibrary(flavor: ClickHouseFlavor): Promise<string> {
  let installing: number | undefined
  const library = await clickhouseLibrary(CLICKHOUSE_BUILDS[flavor], (spec) => {
    installing = Date.now()
    console.warn(`installing ${spec} for the ClickHouse ${flavor} tests (once per machine)`)
  })
  if (installing !== undefined)
    console.warn(`installed in ${((Date.now() - installing) / 1000).toFixed(1)} s`)
  return library
}

/** Picks ports once, so `start()` after `stop()`/`kill()` comes back on the same URL and data. */
export async function ownClickHouse(o: {
  dataDir: string
  flavor: ClickHouseFlavor
}): Promise<() => Promise<OwnClickHouse>> {
  const opts = {
    library: await flavorLibrary(o.flavor),
    dataDir: o.dataDir,
    httpPort: await freePort(),
    tcpPort: await freePort(),
  }
  return async () => {
    const s = await startClickHouseServer(opts)
    return { url: s.url, pid: s.pid, stop: () => s.stop(), kill: () => s.kill() }
  }
}

/** Starts the run's shared server of `flavor` below `dir`. */
export async function startSharedClickHouse(dir: string, flavor: ClickHouseFlavor) {
  const start = await ownClickHouse({ dataDir: join(dir, 'clickhouse'), flavor })
  return start()
}
