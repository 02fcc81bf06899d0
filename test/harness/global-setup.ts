// Starts throw-away nats-server and clickhouse-server processes on free ports, once per test run,
// with their data in a temp dir, and applies the schema. Test files reach them through ./index.ts.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { connectNats, migrateJetStream } from '../../src/jetstream/connection.ts'
import { createLogger } from '../../src/observability/logger.ts'
import { startClickHouseServer } from '../../src/stack/clickhouse-server.ts'
import { ensureBinaries } from '../../src/stack/install.ts'
import { startNatsServer } from '../../src/stack/nats-server.ts'
import { freePort } from '../../src/stack/ports.ts'
import { migrateClickHouse } from '../../src/clickhouse/migrate.ts'
import type { TestStack } from './index.ts'

export default async function setup(project: TestProject) {
  const log = createLogger('warn')
  const bins = ensureBinaries(['nats-server', 'clickhouse-server'], { autoInstall: true, log })
  const dir = mkdtempSync(join(tmpdir(), 'burrow-test-'))
  const [nats, ch] = await Promise.all([
    startNatsServer({ bin: bins['nats-server'], dataDir: join(dir, 'nats'), port: await freePort() }),
    startClickHouseServer({
      bin: bins['clickhouse-server'],
      dataDir: join(dir, 'clickhouse'),
      httpPort: await freePort(),
      tcpPort: await freePort(),
    }),
  ])
  const database = 'burrow_test'
  const nc = await connectNats(nats.url)
  await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
  await nc.close()
  const { client } = await migrateClickHouse(ch.url, database)
  await client.close()
  const stack: TestStack = {
    natsUrl: nats.url,
    clickhouseUrl: ch.url,
    database,
    dir,
    bins: { nats: bins['nats-server'], clickhouse: bins['clickhouse-server'] },
  }
  project.provide('stack', stack)
  return async () => {
    await Promise.all([nats.stop(), ch.stop()])
    rmSync(dir, { recursive: true, force: true })
  }
}
