// The embedded ClickHouse: a current release (chdb's library, clickhouse-library.ts) run as a real
// server with ClickHouse's own HTTP and TCP listeners, its data under the given directory, in a
// process of its own (bin/clickhouse-main.cjs) that never outlives the process that started it.
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { type ManagedProcess, stopStale, untilServing } from './process.ts'

export interface ClickHouseServerOptions {
  /** libchdb's path (clickhouse-library.ts `clickhouseLibrary()`) */
  library: string
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

/** An embedded server: its HTTP URL and the files it logs to. */
export interface ClickHouseServer extends ManagedProcess {
  url: string
  child: ChildProcess
  logFile: string
}

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/**
 * The laptop sizing of the caches (docs/operations.md, "Memory"). ClickHouse sizes its mark and
 * primary-index caches for a server machine (5 GiB each by default); they fill as queries read
 * parts, so on a laptop they would hold most of the memory the whole stack should stay under.
 */
const CACHES = {
  mark_cache_size: 128 << 20,
  index_mark_cache_size: 32 << 20,
  primary_index_cache_size: 64 << 20,
  index_uncompressed_cache_size: 0,
  uncompressed_cache_size: 0,
}

// Everything (data, logs, temporary files) stays under dir, so the server never touches /etc or
// /var and two data dirs never share state.
function configXml(dir: string, o: ClickHouseServerOptions): string {
  const p = (s: string) => xmlEscape(join(dir, s))
  // One replica per shard: the copies that keep data safe are the log's (JetStream), and a lost
  // shard is rebuilt from it by a replay. internal_replication off: the Distributed table writes.
  const remote = o.cluster
    ? `<remote_servers><${o.cluster.name}>${o.cluster.shardTcpPorts
        .map((port) => `<shard><replica><host>127.0.0.1</host><port>${port}</port></replica></shard>`)
        .join('')}</${o.cluster.name}></remote_servers>
  <macros><shard>${o.cluster.shard}</shard></macros>`
    : ''
  const caches = Object.entries(CACHES)
    .map(([k, v]) => `<${k}>${v}</${k}>`)
    .join('')
  return `<clickhouse>
  <logger><level>warning</level><log>${p('log/clickhouse.log')}</log><errorlog>${p('log/clickhouse.err.log')}</errorlog><size>50M</size><count>2</count></logger>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${o.httpPort}</http_port>
  <tcp_port>${o.tcpPort}</tcp_port>
  <tmp_path>${p('tmp')}/</tmp_path>
  <user_files_path>${p('user_files')}/</user_files_path>
  <timezone>UTC</timezone>
  ${caches}
  <users_config>${p('users.xml')}</users_config>
  ${remote}
</clickhouse>
`
}

// A shard of a cluster: writes through Distributed tables reach the shards before the INSERT
// returns (a projector acks only stored rows), and joins/IN over Distributed tables are GLOBAL
// (correct whatever the sharding key; see schema/cluster.ts). A single server keeps the defaults.
const CLUSTER_PROFILE =
  '<distributed_foreground_insert>1</distributed_foreground_insert><distributed_product_mode>global</distributed_product_mode>'

// clickhouse-local's entry point changes four session settings from the server's defaults; a
// server keeps the defaults, so the profile sets them back (introspection functions off, implicit
// SELECT off, file reads and Arrow output as a server does them).
const SERVER_DEFAULTS =
  '<allow_introspection_functions>0</allow_introspection_functions><implicit_select>0</implicit_select>' +
  '<storage_file_read_method>pread</storage_file_read_method><output_format_arrow_use_native_writer>1</output_format_arrow_use_native_writer>'

const usersXml = (cluster: boolean) => `<clickhouse>
  <profiles><default>${SERVER_DEFAULTS}${cluster ? CLUSTER_PROFILE : ''}</default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</clickhouse>
`

export async function pingClickHouse(url: string): Promise<boolean> {
  const res = await fetch(new URL('/ping', url), { signal: AbortSignal.timeout(1000) })
  return res.ok
}

/**
 * Whether the server answering on `url` keeps its data in `dataPath`: a server that could not
 * bind its port exits, but another one already listening there would answer /ping.
 */
async function servesFrom(url: string, dataPath: string): Promise<boolean> {
  const query = "SELECT path FROM system.disks WHERE name = 'default'"
  const res = await fetch(new URL(`/?query=${encodeURIComponent(query)}`, url), {
    signal: AbortSignal.timeout(1000),
  })
  return res.ok && (await res.text()).trim() === dataPath
}

/** The server process's entry point (plain JavaScript, see its header). */
const MAIN = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'bin', 'clickhouse-main.cjs')

function tail(file: string, bytes = 3000): string {
  try {
    const text = readFileSync(file, 'utf8')
    return text.slice(-bytes).trim()
  } catch {
    return ''
  }
}

/**
 * Starts the embedded ClickHouse on the given ports and resolves once it answers /ping; a start
 * that fails rejects with the server's own words (the tail of its output and error log).
 * stop() closes the server's stdin (a clean shutdown) and kills it if it is not gone in 15 s.
 */
export async function startClickHouseServer(opts: ClickHouseServerOptions): Promise<ClickHouseServer> {
  const dir = resolve(opts.dataDir)
  for (const d of ['log', 'data', 'tmp', 'user_files']) mkdirSync(join(dir, d), { recursive: true })
  writeFileSync(join(dir, 'config.xml'), configXml(dir, opts))
  writeFileSync(join(dir, 'users.xml'), usersXml(opts.cluster !== undefined))
  const pidFile = join(dir, 'server.pid')
  await stopStale(pidFile, 'clickhouse')
  const logFile = join(dir, 'log', 'stdout.log')
  const out = openSync(logFile, 'a')
  const child = spawn(
    process.execPath,
    [
      MAIN,
      opts.library,
      '--log-level=warning',
      `--path=${join(dir, 'data')}/`,
      `--config-file=${join(dir, 'config.xml')}`,
    ],
    // The server's time zone is UTC whatever the machine's (Burrow's SQL states zones explicitly).
    { cwd: dir, stdio: ['pipe', out, out], env: { ...process.env, TZ: 'UTC' } },
  )
  closeSync(out)
  if (child.pid === undefined) throw new Error('could not start the embedded ClickHouse')
  const pid = child.pid
  writeFileSync(pidFile, String(pid))
  // The pipe is the server's lifetime; an EPIPE when it is already gone is no error of ours.
  child.stdin?.on('error', () => {})
  const exit = new Promise<void>((r) =>
    child.exitCode !== null || child.signalCode !== null ? r() : child.once('exit', () => r()),
  )
  const stop = async () => {
    child.stdin?.end()
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000)
    await exit
    clearTimeout(timer)
    rmSync(pidFile, { force: true })
  }
  const url = `http://127.0.0.1:${opts.httpPort}`
  try {
    await untilServing(child, () => servesFrom(url, `${join(dir, 'data')}/`), opts.timeoutMs ?? 60_000)
  } catch (err) {
    child.kill('SIGKILL')
    await exit
    const said = [tail(logFile), tail(join(dir, 'log', 'clickhouse.err.log'))].filter(Boolean).join('\n')
    throw new Error(
      `the embedded ClickHouse did not answer on ${url} (${(err as Error).message})${said ? `:\n${said}` : ''}`,
      { cause: err },
    )
  }
  return {
    name: 'clickhouse',
    pid,
    child,
    url,
    logFile,
    stop,
    kill() {
      child.kill('SIGKILL')
    },
  }
}
