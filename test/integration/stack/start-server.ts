// A process that starts an embedded ClickHouse and prints its pid and URL as one JSON line, then
// waits to be killed: embedded-clickhouse.test.ts kills it outright to see the server go with it.
import { clickhouseLibrary } from '../../../src/stack/clickhouse-library.ts'
import { startClickHouseServer } from '../../../src/stack/clickhouse-server.ts'

const [dataDir, httpPort, tcpPort] = process.argv.slice(2)
const server = await startClickHouseServer({
  library: await clickhouseLibrary(),
  dataDir: dataDir!,
  httpPort: Number(httpPort),
  tcpPort: Number(tcpPort),
})
process.stdout.write(`${JSON.stringify({ pid: server.pid, url: server.url })}\n`)
setInterval(() => {}, 60_000)
