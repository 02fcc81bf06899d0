// Starts throw-away nats-server and ClickHouse processes on free ports, once per vitest project,
// with their data in a temp dir, and applies the schema. Test files reach them through ./index.ts.
// The ClickHouse flavor comes from the project (setup-clickhouse-<flavor>.ts, see ./clickhouse.ts).
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { TestProject } from 'vitest/node'
import { migrateClickHouse } from '../../src/clickhouse/migrate.ts'
import { connectNats, migrateJetStream } from '../../src/jetstream/connection.ts'
import { createLogger } from '../../src/observability/logger.ts'
import { ensureBinaries } from '../../src/stack/install.ts'
import { startNatsServer } from '../../src/stack/nats-server.ts'
import { freePort } from '../../src/stack/ports.ts'
import { type ClickHouseFlavor, startSharedClickHouse } from './clickhouse.ts'
import type { TestStack } from './index.ts'

export async function setupStack(project: TestProject, flavor: ClickHouseFlavor) {
  const log = createLogger('warn')
  const bins = ensureBinaries(['nats-server'], { autoInstall: true, log })
  const dir = mkdtempSync(join(tmpdir(), `burrow-test-ch${flavor}-`))
  const started = await Promise.allSettled([
    startNatsServer({ bin: bins['nats-server'], dataDir: join(dir, 'nats'), port: await freePort() }),
    startSharedClickHouse(dir, flavor),
  ])
  const [natsStart, chStart] = started
  if (natsStart.status === 'rejected' || chStart.status === 'rejected') {
    // vitest runs no teardown for a set-up that threw: the server that did start is stopped here,
    // or it would outlive the run.
    await Promise.all(started.map((s) => (s.status === 'fulfilled' ? s.value.stop() : undefined)))
    rmSync(dir, { recursive: true, force: true })
    throw natsStart.status === 'rejected' ? natsStart.reason : (chStart as PromiseRejectedResult).reason
  }
  const nats = natsStart.value
  const ch = chStart.value
  const database = 'burrow_test'
  const nc = await connectNats(nats.url)
  await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
  await nc.close()
  const { client } = await migrateClickHouse(ch.url, database)
  const version = (
    await (
      await client.query({ query: 'SELECT version() AS v', format: 'JSONEachRow' })
    ).json<{
      v: string
    }>()
  )[0]!.v
  await client.close()
  const stack: TestStack = {
    natsUrl: nats.url,
    clickhouseUrl: ch.url,
    clickhouse: { flavor, version },
    database,
    dir,
    bins: { nats: bins['nats-server'] },
  }
  project.provide('stack', stack)
  return async () => {
    await Promise.all([nats.stop(), ch.stop()])
    killLeftServers(dir)
    rmSync(dir, { recursive: true, force: true })
  }
}

/**
 * SIGKILLs the servers that test files started below `dir` (tempDir() is there) and left running:
 * a file whose set-up failed halfway, or whose worker died, never reaches its afterAll, and a
 * process left behind would outlive the run. Each server writes `server.pid` beside its data.
 */
function killLeftServers(dir: string): void {
  const pidFiles = readdirSync(dir, { recursive: true, encoding: 'utf8' }).filter((f) =>
    f.endsWith('server.pid'),
  )
  for (const f of pidFiles) {
    try {
      const pid = Number.parseInt(readFileSync(join(dir, f), 'utf8'), 10)
      const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
      if (cmd.includes('nats-server') || cmd.includes('clickhouse')) process.kill(pid, 'SIGKILL')
    } catch {
      // gone already
    }
  }
}
