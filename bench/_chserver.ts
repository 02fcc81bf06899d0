import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { clickhouseLibrary } from '../src/stack/clickhouse-library.ts'
import { startClickHouseServer } from '../src/stack/clickhouse-server.ts'
import { freePort } from '../src/stack/ports.ts'
import { migrateClickHouse } from '../src/clickhouse/migrate.ts'
const dir = mkdtempSync(join(tmpdir(), 'ingest-ch-'))
const server = await startClickHouseServer({ library: await clickhouseLibrary(), dataDir: join(dir, 'ch'), httpPort: await freePort(), tcpPort: await freePort() })
const { client } = await migrateClickHouse(server.url, 'x')
await client.close()
console.log('READY', server.url, process.pid)
setInterval(() => {}, 1e9)
