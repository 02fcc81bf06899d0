// A cluster of ClickHouse 26.x servers for the schema's cluster mode (schema/cluster.ts): each
// shard is libchdb run as a server by listen.py (clickhouse-local's own TCP and HTTP listeners),
// with its own data directory, and a `remote_servers` cluster naming every shard's TCP port, as
// `burrow cluster up` and the 18.16 test servers do. Distributed tables reach the other shards over
// TCP, so these are real shards, unlike the HTTP front of server.ts (which has no TCP listener).
import { type ChildProcess, spawn } from 'node:child_process'
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { pingClickHouse } from '../../../src/stack/clickhouse-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import { chdbLibPackage, ensureChdb } from './install.ts'

/** One shard: its HTTP URL (the ClickHouse HTTP interface) and its native TCP port. */
export interface ChdbShard {
  url: string
  tcpPort: number
  pid: number
  logFile: string
  stop(): Promise<void>
}

const LISTEN_SCRIPT = join(dirname(fileURLToPath(import.meta.url)), 'listen.py')

const xmlEscape = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;')

/**
 * The shard servers' profile, as src/stack/clickhouse-server.ts gives 18.16 shards: writes through
 * Distributed tables return once every shard has its rows (26.x's name for
 * insert_distributed_sync), and joins and IN over Distributed tables are GLOBAL.
 */
const usersXml = `<clickhouse>
  <profiles><default><distributed_foreground_insert>1</distributed_foreground_insert><distributed_product_mode>global</distributed_product_mode></default></profiles>
  <users><default><password></password><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota></default></users>
  <quotas><default></default></quotas>
</clickhouse>
`

function configXml(dir: string, httpPort: number, tcpPort: number, cluster: string, tcpPorts: number[]) {
  const shards = tcpPorts
    .map((port) => `<shard><replica><host>127.0.0.1</host><port>${port}</port></replica></shard>`)
    .join('')
  return `<clickhouse>
  <listen_host>127.0.0.1</listen_host>
  <http_port>${httpPort}</http_port>
  <tcp_port>${tcpPort}</tcp_port>
  <timezone>UTC</timezone>
  <users_config>${xmlEscape(join(dir, 'users.xml'))}</users_config>
  <remote_servers><${cluster}>${shards}</${cluster}></remote_servers>
</clickhouse>
`
}

/** libchdb.so (or .dylib) in chdb's install directory. */
function libchdb(chdb: string): string {
  const dir = join(chdb, 'node_modules', chdbLibPackage())
  const lib = readdirSync(dir).find((f) => /^libchdb\.(so|dylib)$/.test(f))
  if (!lib) throw new Error(`no libchdb in ${dir}`)
  return join(dir, lib)
}

const exited = (child: ChildProcess): Promise<void> =>
  child.exitCode !== null || child.signalCode !== null
    ? Promise.resolve()
    : new Promise((r) => child.once('exit', () => r()))

/**
 * Starts `shards` ClickHouse 26.x servers under `dir` (one subdirectory each), every one holding
 * cluster `cluster` of all of them, and resolves when every one answers /ping (or rejects with
 * the log's tail). Needs python3 (listen.py). Each server stops when stop() is called or when
 * this process exits (it reads its stdin to the end).
 */
export async function startChdbCluster(o: {
  dir: string
  shards: number
  cluster: string
  timeoutMs?: number
}): Promise<ChdbShard[]> {
  const lib = libchdb(await ensureChdb())
  const ports = []
  for (let i = 0; i < o.shards; i++) ports.push({ http: await freePort(), tcp: await freePort() })
  const tcpPorts = ports.map((p) => p.tcp)
  const started: ChdbShard[] = []
  try {
    for (const [i, p] of ports.entries()) {
      const dir = resolve(o.dir, `s${i + 1}`)
      mkdirSync(join(dir, 'data'), { recursive: true })
      writeFileSync(join(dir, 'users.xml'), usersXml)
      writeFileSync(join(dir, 'config.xml'), configXml(dir, p.http, p.tcp, o.cluster, tcpPorts))
      const logFile = join(dir, 'server.log')
      const fd = openSync(logFile, 'a')
      const child = spawn(
        'python3',
        [LISTEN_SCRIPT, lib, `--path=${join(dir, 'data')}/`, `--config-file=${join(dir, 'config.xml')}`],
        { cwd: dir, stdio: ['pipe', fd, fd], env: { ...process.env, TZ: 'UTC' } },
      )
      closeSync(fd)
      // no python3: spawn reports it as an 'error' event, which unhandled would end this process
      const failed = new Promise<never>((_, reject) =>
        child.once('error', (err) => reject(new Error(`cannot run python3 for listen.py: ${err.message}`))),
      )
      failed.catch(() => {})
      started.push({
        url: `http://127.0.0.1:${p.http}`,
        tcpPort: p.tcp,
        pid: child.pid!,
        logFile,
        async stop() {
          const done = exited(child)
          child.stdin?.end()
          const timer = setTimeout(() => child.kill('SIGKILL'), 10_000)
          await done
          clearTimeout(timer)
        },
      })
      await Promise.race([waitForPing(started.at(-1)!, child, o.timeoutMs ?? 60_000), failed])
    }
    return started
  } catch (err) {
    await Promise.all(started.map((s) => s.stop()))
    throw err
  }
}

async function waitForPing(shard: ChdbShard, child: ChildProcess, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`chdb shard exited (${child.signalCode ?? child.exitCode})\n${tail(shard.logFile)}`)
    if (await pingClickHouse(shard.url).catch(() => false)) return
    if (Date.now() > deadline)
      throw new Error(`chdb shard did not answer within ${timeoutMs} ms\n${tail(shard.logFile)}`)
    await new Promise((r) => setTimeout(r, 100))
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').slice(-4000)
  } catch {
    return ''
  }
}
