// Fault tests run real processes: a nats-server and a clickhouse-server of their own (so stopping
// them disturbs no other test file) and Burrow as a child process through its CLI, killed with
// SIGKILL the way a crash or an OOM kill would. Events are counted by uuid before and after.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { jetstreamManager } from '@nats-io/jetstream'
import { v4 as uuidv4 } from 'uuid'
import { EVENTS_STREAM } from '../../../schema/jetstream.ts'
import { connectNats, type NatsConnection } from '../../../src/jetstream/connection.ts'
import { startNatsServer } from '../../../src/stack/nats-server.ts'
import { freePort } from '../../../src/stack/ports.ts'
import type { ManagedProcess } from '../../../src/stack/process.ts'
import { type ClickHouseClient, clickhouseClient } from '../../../src/clickhouse/client.ts'
import { type CliProcess, spawnBurrow } from '../../harness/cli.ts'
import type { OwnClickHouse } from '../../harness/clickhouse.ts'
import { privateClickHouse, stack, tempDir } from '../../harness/index.ts'

export const DATABASE = 'burrow'
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms))

type Server = ManagedProcess & { url: string }

/** A nats-server and a clickhouse-server of one test, restartable on the same ports and data. */
export class PrivateStack {
  nats!: Server
  ch!: OwnClickHouse
  private natsOpts!: Parameters<typeof startNatsServer>[0]
  private chStart!: () => Promise<OwnClickHouse>
  private readonly closers: (() => Promise<unknown>)[] = []
  readonly dir = tempDir('burrow-fault-')

  static async start(): Promise<PrivateStack> {
    const s = new PrivateStack()
    const bins = stack().bins
    s.natsOpts = { bin: bins.nats, dataDir: join(s.dir, 'nats'), port: await freePort() }
    s.chStart = await privateClickHouse(join(s.dir, 'ch'))
    ;[s.nats, s.ch] = await Promise.all([startNatsServer(s.natsOpts), s.chStart()])
    return s
  }

  get env(): Record<string, string> {
    return { NATS_URL: this.nats.url, CLICKHOUSE_URL: this.ch.url, CLICKHOUSE_DATABASE: DATABASE }
  }

  /** SIGKILL: ClickHouse's graceful stop takes seconds, and a crash is the harsher case. */
  async killClickHouse(): Promise<void> {
    this.ch.kill()
    await waitGone(this.ch.pid)
  }

  async startClickHouse(): Promise<void> {
    this.ch = await this.chStart()
  }

  async stopNats(): Promise<void> {
    await this.nats.stop()
  }

  async startNats(): Promise<void> {
    this.nats = await startNatsServer(this.natsOpts)
  }

  client(): ClickHouseClient {
    const c = clickhouseClient(this.ch.url, DATABASE)
    this.closers.push(() => c.close())
    return c
  }

  async natsClient(): Promise<NatsConnection> {
    const nc = await connectNats(this.nats.url, 'fault-test')
    this.closers.push(() => nc.close())
    return nc
  }

  async stop(): Promise<void> {
    for (const c of this.closers.splice(0).reverse()) await c().catch(() => undefined)
    this.nats.kill()
    this.ch.kill()
  }
}

async function waitGone(pid: number): Promise<void> {
  for (let i = 0; i < 200; i++) {
    try {
      process.kill(pid, 0)
    } catch {
      return
    }
    await sleep(25)
  }
}

export interface BurrowProcess {
  proc: CliProcess
  url: string
  token: string
  projectId: number
  personalKey: string
  kill(): Promise<void>
  stop(): Promise<void>
}

/** `burrow start` as a child process on the given servers; resolves once it listens. */
export async function startBurrowProcess(
  env: Record<string, string>,
  opts: { role?: string; dataDir: string; port: number },
): Promise<BurrowProcess> {
  const proc = spawnBurrow(['start', ...(opts.role ? ['--role', opts.role] : [])], {
    DATA_DIR: opts.dataDir,
    PORT: String(opts.port),
    ...env,
  })
  const [, url] = (await proc.waitFor(/Burrow listening on (http:\/\/\S+)/, 60_000)) as RegExpMatchArray
  const creds = JSON.parse(readFileSync(join(opts.dataDir, 'local-credentials.json'), 'utf8'))
  const gone = async (signal: NodeJS.Signals) => {
    if (proc.child.exitCode === null && proc.child.signalCode === null) proc.child.kill(signal)
    await proc.exited
  }
  return {
    proc,
    url: url!,
    token: creds.project_api_key,
    projectId: creds.project_id,
    personalKey: creds.personal_api_key,
    kill: () => gone('SIGKILL'),
    stop: () => gone('SIGTERM'),
  }
}

export interface TestEvent {
  uuid: string
  event: string
  distinct_id: string
  properties: Record<string, unknown>
  timestamp: string
}

/** Events with client-chosen uuids (as SDKs send them), spread over `people` distinct ids. */
export function makeEvents(n: number, tag: string, people = 500): TestEvent[] {
  const base = Date.now() - 3600_000
  return Array.from({ length: n }, (_, i) => ({
    uuid: uuidv4(),
    event: i % 10 === 0 ? 'signed up' : '$pageview',
    distinct_id: `${tag}-user-${i % people}`,
    properties: { i, tag, $current_url: `https://example.com/${i % 37}` },
    timestamp: new Date(base + i).toISOString(),
  }))
}

export type SendResult = number | 'error'

/** POST /batch/; a connection error (process gone) is 'error', not an exception. */
export async function sendBatch(url: string, token: string, events: TestEvent[]): Promise<SendResult> {
  try {
    const res = await fetch(`${url}/batch/`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ api_key: token, batch: events }),
      signal: AbortSignal.timeout(15_000),
    })
    await res.arrayBuffer()
    return res.status
  } catch {
    return 'error'
  }
}

/** What the clients sent and what Burrow acknowledged, by uuid. */
export class Ledger {
  readonly sent = new Set<string>()
  readonly acked = new Set<string>()
  readonly statuses = new Map<string, number>()

  record(events: TestEvent[], result: SendResult): void {
    for (const e of events) this.sent.add(e.uuid)
    if (result === 200) for (const e of events) this.acked.add(e.uuid)
    const k = String(result)
    this.statuses.set(k, (this.statuses.get(k) ?? 0) + 1)
  }

  /** Sends until a 200 (an SDK's retry), resending the same uuids; gives up at the deadline. */
  async sendUntilAcked(
    url: () => string,
    token: string,
    events: TestEvent[],
    opts: { deadline: number; onResult?: (r: SendResult, startedAt: number, endedAt: number) => void },
  ): Promise<boolean> {
    while (Date.now() < opts.deadline) {
      const startedAt = Date.now()
      const r = await sendBatch(url(), token, events)
      opts.onResult?.(r, startedAt, Date.now())
      this.record(events, r)
      if (r === 200) return true
      await sleep(200)
    }
    return false
  }
}

/** Rows per uuid of a team, read with a plain SELECT (no FINAL): a duplicate must not exist as a row. */
export async function storedCounts(ch: ClickHouseClient, team: number): Promise<Map<string, number>> {
  const rs = await ch.query({
    query: `SELECT toString(uuid) AS u, count() AS c FROM events WHERE team_id = ${team} GROUP BY u`,
    format: 'JSONEachRow',
  })
  return new Map((await rs.json<{ u: string; c: string }>()).map((r) => [r.u, Number(r.c)]))
}

export async function duplicateRows(ch: ClickHouseClient, team: number): Promise<{ u: string; c: string }[]> {
  const rs = await ch.query({
    query: `SELECT toString(uuid) AS u, count() AS c FROM events WHERE team_id = ${team}
            GROUP BY u HAVING count() > 1`,
    format: 'JSONEachRow',
  })
  return rs.json()
}

export async function storedTotal(ch: ClickHouseClient, team: number): Promise<number> {
  const rs = await ch.query({
    query: `SELECT count() AS c FROM events WHERE team_id = ${team}`,
    format: 'JSONEachRow',
  })
  const [r] = await rs.json<{ c: string }>()
  return Number(r?.c ?? 0)
}

/** Polls until every acknowledged uuid is stored (or the time is up), tolerating ClickHouse restarts. */
export async function waitStored(ch: ClickHouseClient, team: number, ledger: Ledger, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const counts = await storedCounts(ch, team).catch(() => new Map<string, number>())
    const missing = [...ledger.acked].filter((u) => !counts.has(u)).length
    if (missing === 0 || Date.now() > deadline) return counts
    await sleep(250)
  }
}

/** Waits until every durable consumer of the event log has acknowledged everything. */
export async function waitProjectorsIdle(nc: NatsConnection, timeoutMs = 60_000): Promise<void> {
  const jsm = await jetstreamManager(nc)
  const deadline = Date.now() + timeoutMs
  for (;;) {
    let busy = 0
    for await (const c of jsm.consumers.list(EVENTS_STREAM)) {
      if (c.config.durable_name) busy += c.num_pending + c.num_ack_pending
    }
    if (busy === 0) return
    if (Date.now() > deadline) throw new Error(`projectors still have ${busy} messages to do`)
    await sleep(200)
  }
}

export interface Tally {
  scenario: string
  sent: number
  acknowledged: number
  stored: number
  lost: number
  duplicated: number
  /** stored rows whose uuid no client sent */
  unexpected: number
}

/** Compares the ledger with what ClickHouse holds: lost = acknowledged but absent, duplicated = extra rows. */
export function tally(scenario: string, ledger: Ledger, counts: Map<string, number>): Tally {
  let stored = 0
  let duplicated = 0
  let unexpected = 0
  for (const [u, c] of counts) {
    stored += c
    if (c > 1) duplicated += c - 1
    if (!ledger.sent.has(u)) unexpected += c
  }
  const lost = [...ledger.acked].filter((u) => !counts.has(u)).length
  return {
    scenario,
    sent: ledger.sent.size,
    acknowledged: ledger.acked.size,
    stored,
    lost,
    duplicated,
    unexpected,
  }
}

export function summaryLine(tallies: Tally[]): string {
  const sum = (k: keyof Omit<Tally, 'scenario'>) => tallies.reduce((a, t) => a + t[k], 0)
  return (
    `fault suite (${tallies.length} scenarios): events sent ${sum('sent')}, acknowledged ${sum('acknowledged')}, ` +
    `stored ${sum('stored')}, lost ${sum('lost')}, duplicated ${sum('duplicated')}`
  )
}

/** Splits events into batches of `size`. */
export function batches<T>(items: T[], size: number): T[][] {
  const out: T[][] = []
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size))
  return out
}
