import { mkdirSync, writeFileSync } from 'node:fs'
import { join, resolve } from 'node:path'
import { type ManagedProcess, startProcess, stopStale, untilServing } from './process.ts'

export interface ClickHouseServerOptions {
  bin: string
  dataDir: string
  httpPort: number
  tcpPort: number
  timeoutMs?: number
  /**
   * Makes the server one shard of a cluster (`remote_servers`): the native (TCP) ports of every
   * shard on loopback, in shard order, this one's included; `shard` is this server's 1-based number.
   */
  cluster?: { name: string; shardTcpPorts: number[]; shard: number }
}

/**
 * jemalloc's options for the server Burrow starts (MALLOC_CONF in the environment wins). The
 * server's RSS under a steady insert load was mostly pages jemalloc had freed and kept: its
 * default returns freed ("dirty") pages to the OS only after 10 s and only when the arena that
 * holds them allocates again, and each insert or merge thread's arena keeps its own. Under 10K
 * events/s that was 250–550 MiB of the server's 300–660 MiB (docs/performance.md). Returning them
 * after 1 s, from jemalloc's background thread, keeps ~100 MiB. But a page given back and touched
 * again is a fresh page fault, dear on a VM (~10 µs here), and jemalloc 5.3 puts allocations of
 * 8 MiB or more (`oversize_threshold`) in an arena of their own that it purges at once whenever the
 * decay is above 0: every INSERT's large buffers were faulted in anew, 14–17 µs of ClickHouse CPU
 * per inserted row against 7–8 µs with nothing returned. `oversize_threshold:0` keeps them in the
 * ordinary arenas under the same 1 s: 10.5–11.9 µs, the soak's peak as before. Nothing returned
 * (`dirty_decay_ms:-1`) grew the server to 1.4–2.0 GiB in two minutes at 10K events/s
 * (docs/performance.md, "Fresh pages on this machine"). jemalloc options, not ClickHouse settings:
 * they apply to Debian's 18.16 (libjemalloc 5.3) and to current ClickHouse builds (bundled
 * jemalloc, which reads MALLOC_CONF too).
 */
export const CLICKHOUSE_MALLOC_CONF =
  'background_thread:true,dirty_decay_ms:1000,muzzy_decay_ms:0,oversize_threshold:0'

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

// A minimal config that works on 18.16 and keeps everything (data, logs, users) under dataDir,
// so the server never touches /etc or /var and two data dirs never share state.
function configXml(
  dir: string,
  httpPort: number,
  tcpPort: number,
  cluster?: ClickHouseServerOptions['cluster'],
): string {
  const p = (s: string) => xmlEscape(join(dir, s))
  // One replica per shard: the copies that keep data safe are the log's (JetStream), and a lost
  // shard is rebuilt from it by a replay. internal_replication off: the Distributed table writes.
  const remote = cluster
    ? `<remote_servers><${cluster.name}>${cluster.shardTcpPorts
        .map((port) => `<shard><replica><host>127.0.0.1</host><port>${port}</port></replica></shard>`)
        .join('')}</${cluster.name}></remote_servers>
  <macros><shard>${cluster.shard}</shard></macros>`
    : ''
  // Memory (docs/operations.md): a 64 MiB mark cache and, in users.xml, 4 merge threads rather than
  // 18.16's 16 — on a laptop's few cores more threads only hold more merge buffers at once.
  return `<?xml version="1.0"?>
<yandex>
  <logger><level>warning</level><log>${p('log/server.log')}</log><errorlog>${p('log/error.log')}</errorlog><size>50M</size><count>2</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <path>${p('data')}/</path>
  <tmp_path>${p('tmp')}/</tmp_path>
  <user_files_path>${p('user_files')}/</user_files_path>
  <format_schema_path>${p('format_schemas')}/</format_schema_path>
  <mark_cache_size>67108864</mark_cache_size>
  <max_concurrent_queries>200</max_concurrent_queries>
  <users_config>users.xml</users_config>
  <default_profile>default</default_profile>
  <default_database>default</default_database>
  <timezone>UTC</timezone>
  ${remote}
</yandex>
`
}

// A shard of a cluster: writes through Distributed tables reach the shards before the INSERT
// returns (a projector acks only stored rows), and joins/IN over Distributed tables are GLOBAL
// (correct whatever the sharding key; see schema/cluster.ts).
const CLUSTER_PROFILE =
  '<insert_distributed_sync>1</insert_distributed_sync><distributed_product_mode>global</distributed_product_mode>'

const usersXml = (cluster: boolean) => `<?xml version="1.0"?>
<yandex>
  <profiles><default><max_memory_usage>8000000000</max_memory_usage><background_pool_size>4</background_pool_size>${cluster ? CLUSTER_PROFILE : ''}</default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default><interval><duration>3600</duration><queries>0</queries><errors>0</errors><result_rows>0</result_rows><read_rows>0</read_rows><execution_time>0</execution_time></interval></default></quotas>
</yandex>
`

export async function pingClickHouse(url: string): Promise<boolean> {
  const res = await fetch(new URL('/ping', url), { signal: AbortSignal.timeout(1000) })
  return res.ok
}

export async function startClickHouseServer(
  opts: ClickHouseServerOptions,
): Promise<ManagedProcess & { url: string }> {
  const dir = resolve(opts.dataDir)
  for (const d of ['log', 'data', 'tmp', 'user_files', 'format_schemas']) {
    mkdirSync(join(dir, d), { recursive: true })
  }
  writeFileSync(join(dir, 'config.xml'), configXml(dir, opts.httpPort, opts.tcpPort, opts.cluster))
  writeFileSync(join(dir, 'users.xml'), usersXml(opts.cluster !== undefined))
  const pidFile = join(dir, 'server.pid')
  await stopStale(pidFile, 'clickhouse')
  const proc = startProcess({
    name: 'clickhouse-server',
    bin: opts.bin,
    args: [`--config-file=${join(dir, 'config.xml')}`],
    logFile: join(dir, 'log', 'stdout.log'),
    pidFile,
    cwd: dir,
    env: { MALLOC_CONF: process.env.MALLOC_CONF ?? CLICKHOUSE_MALLOC_CONF },
  })
  const url = `http://127.0.0.1:${opts.httpPort}`
  try {
    await untilServing(proc.child, () => pingClickHouse(url), opts.timeoutMs ?? 60_000)
  } catch (err) {
    proc.kill()
    throw new Error(
      `clickhouse-server did not answer on ${url} (${(err as Error).message}); see ${join(dir, 'log')}`,
      {
        cause: err,
      },
    )
  }
  return { ...proc, url }
}
