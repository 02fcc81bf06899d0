// A process that starts an embedded ClickHouse and prints its pid and URL as one JSON line, then
// waits to be killed: embedded-clickhouse.test.ts kills it outright to see the server go with it.
import { startClickHouseServer } from '../../../src/stack/clickhouse-server.ts'

// The library is the run's flavor's (test/harness/clickhouse.ts), passed by the test.
const [library, dataDir, httpPort, tcpPort] = process.argv.slice(2)
const server = await startClickHouseServer({
  library: library!,
  dataDir: dataDir!,
  httpPort: Number(httpPort),
  tcpPort: Number(tcpPort),
})
process.stdout.write(`${JSON.stringify({ pid: server.pid, url: server.url })}\n`)
setInterval(() => {}, 60_000)
