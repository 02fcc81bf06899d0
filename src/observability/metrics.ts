import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client'

// Prometheus metrics of this process, served at GET /metrics.
export const registry = new Registry()
collectDefaultMetrics({ register: registry })

export const httpRequests = new Counter({
  name: 'burrow_http_requests_total',
  help: 'HTTP requests by route and status',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
})

export const capturedEvents = new Counter({
  name: 'burrow_capture_events_total',
  help: 'Events accepted into the log, by lane',
  labelNames: ['lane'] as const,
  registers: [registry],
})

export const droppedEvents = new Counter({
  name: 'burrow_capture_events_dropped_total',
  help: 'Events dropped by capture, by reason',
  labelNames: ['reason'] as const,
  registers: [registry],
})

export const publishSeconds = new Histogram({
  name: 'burrow_capture_publish_seconds',
  help: 'Time from publishing a request’s chunks to JetStream until every ack arrived',
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [registry],
})

// Replay builds `<table>_replay_<id>`; one label per base table keeps the series count fixed.
const baseTable = (table: string) => table.replace(/_(replay|old)_[A-Za-z0-9]+$/, '')

const insertSeconds = new Histogram({
  name: 'burrow_clickhouse_insert_seconds',
  help: 'Duration of successful ClickHouse INSERTs by the projectors, by table',
  labelNames: ['table'] as const,
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
})

const insertRows = new Counter({
  name: 'burrow_clickhouse_insert_rows_total',
  help: 'Rows written to ClickHouse by the projectors, by table',
  labelNames: ['table'] as const,
  registers: [registry],
})

const insertErrors = new Counter({
  name: 'burrow_clickhouse_insert_errors_total',
  help: 'ClickHouse INSERTs that failed (they are retried), by table',
  labelNames: ['table'] as const,
  registers: [registry],
})

/** Times one INSERT; call the returned function with the outcome. */
export function timeInsert(table: string, rows: number): (ok: boolean) => void {
  const start = performance.now()
  const label = { table: baseTable(table) }
  return (ok) => {
    if (!ok) {
      insertErrors.inc(label)
      return
    }
    insertSeconds.observe(label, (performance.now() - start) / 1000)
    insertRows.inc(label, rows)
  }
}

export const queryDurationSeconds = new Histogram({
  name: 'burrow_query_duration_seconds',
  help: 'Time ClickHouse took to answer a query request (cache hits excluded), by query kind',
  labelNames: ['kind'] as const,
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
  registers: [registry],
})

export const deadLetters = new Counter({
  name: 'burrow_projector_dead_letters_total',
  help: 'Dead letters published by the projectors: a whole log message or one event of it',
  labelNames: ['kind'] as const,
  registers: [registry],
})

export const retentionDrops = new Counter({
  name: 'burrow_retention_partitions_dropped_total',
  help: 'ClickHouse partitions dropped by the retention job, by table',
  labelNames: ['table'] as const,
  registers: [registry],
})

export interface ConsumerLag {
  consumer: string
  /** messages in the log the consumer has not been delivered yet */
  pending: number
  /** delivered but not acknowledged (in a batch being projected) */
  ackPending: number
}

let lagSource: (() => Promise<ConsumerLag[]>) | undefined

/** Where the lag gauges read from at scrape time; undefined in processes that run no projector. */
export function setConsumerLagSource(source: (() => Promise<ConsumerLag[]>) | undefined): void {
  lagSource = source
}

// Read at scrape time from JetStream's consumer info, so the number is the server's, not a local
// estimate; a slow or unreachable NATS leaves the gauge empty rather than stalling the scrape.
new Gauge({
  name: 'burrow_projector_lag_messages',
  help: 'Log messages (chunks of up to CAPTURE_CHUNK_EVENTS events) a projector consumer has not acknowledged',
  labelNames: ['consumer', 'state'] as const,
  registers: [registry],
  async collect() {
    this.reset()
    if (!lagSource) return
    const lags = await withTimeout(lagSource(), 1000).catch(() => [])
    for (const l of lags) {
      this.set({ consumer: l.consumer, state: 'pending' }, l.pending)
      this.set({ consumer: l.consumer, state: 'ack_pending' }, l.ackPending)
    }
  },
})

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined
  return Promise.race([
    p,
    new Promise<T>((_, reject) => {
      timer = setTimeout(() => reject(new Error('timeout')), ms)
    }),
  ]).finally(() => clearTimeout(timer))
}
