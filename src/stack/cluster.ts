// `burrow cluster up`: a whole scaled-out topology on loopback, for trying scale-out and for tests:
// a NATS cluster, ClickHouse shards, projector, capture and api processes (each `burrow start
// --role …` as a child process), data under one DATA_DIR. docker-compose.cluster.yml is the same
// topology on separate machines.
import { type ChildProcess, spawn } from 'node:child_process'
import { copyFileSync, mkdirSync, openSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type Credentials, credentialsFile, ensureDefaults } from '../accounts/bootstrap.ts'
import { AccountStore } from '../accounts/store.ts'
import { CLICKHOUSE_CLUSTER } from '../../schema/cluster.ts'
import { migrateDeployment } from '../clickhouse/deployment.ts'
import { connectNats, migrateJetStream } from '../jetstream/connection.ts'
import type { Logger } from '../observability/logger.ts'
import { clickhouseLibrary } from './clickhouse-library.ts'
import { startClickHouseServer } from './clickhouse-server.ts'
import { ensureBinaries } from './install.ts'
import { startNatsCluster } from './nats-cluster.ts'
import { freePort } from './ports.ts'
import { type ManagedProcess, untilServing } from './process.ts'

const BURROW_BIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'burrow.js')

export interface ClusterOptions {
  dataDir: string
  nats: number
  clickhouseShards: number
  projectors: number
  capture: number
  database: string
  /** LOG_PARTITIONS of every process: the units projectors share */
  partitions: number
  log: Logger
  /** extra environment for the Burrow processes (e.g. LOG_PARTITIONS) */
  env?: Record<string, string>
}

/** What `cluster up` prints once every part answers (one JSON line). */
export interface ClusterDescription {
  capture_urls: string[]
  api_url: string
  nats_urls: string[]
  clickhouse_urls: string[]
  credentials: Credentials
  pids: { nats: number[]; clickhouse: number[]; projectors: number[]; capture: number[]; api: number[] }
}

interface Child {
  role: string
  name: string
  child: ChildProcess
  url: string
  exited: Promise<void>
}

/** A `burrow start --role <role>` child; resolves once it printed the URL it listens on. */
async function startChild(
  role: string,
  name: string,
  env: Record<string, string>,
  dataDir: string,
  log: Logger,
): Promise<Child> {
  mkdirSync(dataDir, { recursive: true })
  const out = openSync(join(dataDir, 'burrow.log'), 'a')
  const child = spawn(process.execPath, [BURROW_BIN, 'start', '--role', role], {
    env: { ...process.env, ...env, DATA_DIR: dataDir, PORT: String(await freePort()) },
    stdio: ['ignore', 'pipe', out],
  })
  const exited = new Promise<void>((r) => child.once('exit', () => r()))
  let seen = ''
  const url = await new Promise<string>((res, rej) => {
    const onData = (b: Buffer) => {
      seen += b.toString()
      const m = seen.match(/Burrow listening on (http:\/\/\S+)/)
      if (m) {
        child.stdout!.off('data', onData)
        child.stdout!.resume()
        res(m[1]!)
      }
    }
    child.stdout!.on('data', onData)
    void exited.then(() =>
      rej(new Error(`${name} exited before listening; see ${join(dataDir, 'burrow.log')}`)),
    )
  })
  void exited.then(() => {
    if (!stopping.has(child))
      log.warn({ name, pid: child.pid, code: child.exitCode }, 'cluster: process exited')
  })
  return { role, name, child, url, exited }
}

const stopping = new WeakSet<ChildProcess>()

async function stopChild(c: Child): Promise<void> {
  if (c.child.exitCode !== null || c.child.signalCode !== null) return
  stopping.add(c.child)
  c.child.kill('SIGTERM')
  const t = setTimeout(() => c.child.kill('SIGKILL'), 20_000)
  await c.exited
  clearTimeout(t)
}

export interface RunningCluster {
  description: ClusterDescription
  stop(): Promise<void>
}

/** Starts the topology; every part answers when this resolves. */
export async function startCluster(o: ClusterOptions): Promise<RunningCluster> {
  const dataDir = resolve(o.dataDir)
  mkdirSync(dataDir, { recursive: true })
  const bins = ensureBinaries(['nats-server'], { autoInstall: false, log: o.log })
  const library = await clickhouseLibrary()
  const servers: ManagedProcess[] = []
  const children: Child[] = []
  const stop = async () => {
    // Burrow processes first (capture stops accepting, projectors finish their batch), then servers.
    await Promise.all(children.map(stopChild))
    await Promise.all(servers.map((s) => s.stop()))
  }
  try {
    const natsCluster = await startNatsCluster({
      bin: bins['nats-server'],
      dataDir: join(dataDir, 'nats'),
      size: o.nats,
    })
    for (const n of natsCluster.nodes) servers.push(n.process!)
    const tcpPorts: number[] = []
    const httpPorts: number[] = []
    for (let i = 0; i < o.clickhouseShards; i++) {
      tcpPorts.push(await freePort())
      httpPorts.push(await freePort())
    }
    const shards = await Promise.all(
      tcpPorts.map((tcpPort, i) =>
        startClickHouseServer({
          library,
          dataDir: join(dataDir, 'clickhouse', `shard${i + 1}`),
          httpPort: httpPorts[i]!,
          tcpPort,
          ...(o.clickhouseShards > 1
            ? { cluster: { name: CLICKHOUSE_CLUSTER, shardTcpPorts: tcpPorts, shard: i + 1 } }
            : {}),
        }),
      ),
    )
    servers.push(...shards)
    const clickhouseUrls = shards.map((s) => s.url)

    // The schema and the default project once, here, so the processes start on a ready store.
    const nc = await connectNats(natsCluster.url, 'burrow-cluster')
    let credentials: Credentials
    try {
      await migrateJetStream(nc, { eventsMaxAgeSeconds: 0 })
      credentials = (await ensureDefaults(await AccountStore.open(nc), dataDir)).credentials
    } finally {
      await nc.close()
    }
    // with shards, cluster mode: local tables per shard, Distributed tables under the usual names
    const { client } = await migrateDeployment({
      url: clickhouseUrls[0]!,
      database: o.database,
      shardUrls: o.clickhouseShards > 1 ? clickhouseUrls : [],
      log: o.log,
    })
    await client.close()

    const env = {
      ...o.env,
      NATS_URL: natsCluster.url,
      CLICKHOUSE_URL: clickhouseUrls[0]!,
      ...(o.clickhouseShards > 1 ? { CLICKHOUSE_SHARD_URLS: clickhouseUrls.join(',') } : {}),
      CLICKHOUSE_DATABASE: o.database,
      LOG_PARTITIONS: String(o.partitions),
      PROJECTOR_PARTITION_LEASES: 'true',
    }
    const spawnRole = async (role: string, name: string) => {
      const dir = join(dataDir, name)
      mkdirSync(dir, { recursive: true })
      copyFileSync(credentialsFile(dataDir), credentialsFile(dir))
      const c = await startChild(role, name, env, dir, o.log)
      children.push(c)
      return c
    }
    const roles: [string, string][] = [
      ['api', 'api'],
      ...Array.from({ length: o.projectors }, (_, i): [string, string] => ['projector', `projector${i + 1}`]),
      ...Array.from({ length: o.capture }, (_, i): [string, string] => ['capture', `capture${i + 1}`]),
    ]
    // One at a time: start-up is CPU-bound (TypeScript through tsx), and parallel starts on a small
    // machine take longer in all than serial ones.
    for (const [role, name] of roles) await spawnRole(role, name)
    // "Answers": every process's /_health is 200 (its NATS and ClickHouse answer from there too). A
    // process that exits meanwhile ends the wait at once, with its name (its log says why).
    await untilServing(
      children,
      async () => {
        const codes = await Promise.all(
          children.map((c) =>
            fetch(`${c.url}/_health`, { signal: AbortSignal.timeout(2000) }).then((r) => r.status),
          ),
        )
        return codes.every((s) => s === 200)
      },
      60_000,
    ).catch((err: Error) => {
      throw new Error(
        `cluster: ${err.message} while starting (each process logs to ${dataDir}/<name>/burrow.log)`,
        { cause: err },
      )
    })
    const of = (role: string) => children.filter((c) => c.role === role)
    return {
      description: {
        capture_urls: of('capture').map((c) => c.url),
        api_url: of('api')[0]!.url,
        nats_urls: natsCluster.nodes.map((n) => n.url),
        clickhouse_urls: clickhouseUrls,
        credentials,
        pids: {
          nats: natsCluster.nodes.map((n) => n.process!.pid),
          clickhouse: shards.map((s) => s.pid),
          projectors: of('projector').map((c) => c.child.pid!),
          capture: of('capture').map((c) => c.child.pid!),
          api: of('api').map((c) => c.child.pid!),
        },
      },
      stop,
    }
  } catch (err) {
    await stop()
    throw err
  }
}
