import { v4 as uuidv4, v7 as uuidv7 } from 'uuid'
import type { Logger } from '../observability/logger.ts'
import type { ClickHouseClient } from '../clickhouse/client.ts'
import type { LogEntry, LogInput, PluginLogSink } from './types.ts'

export const PLUGIN_LOG_TABLE = 'plugin_log_entries'

/** Identifies this process in `instance_id`, as PostHog's plugin server instance id does. */
export const INSTANCE_ID = uuidv4()

export interface LogWriterOptions {
  /** flush when this many lines wait */
  batchSize?: number
  /** flush at least this often while lines wait */
  flushIntervalMs?: number
  /** lines kept while ClickHouse is unreachable; the oldest go first beyond it */
  maxBuffered?: number
  log?: Logger
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0')
const chDateTime = (d: Date) =>
  `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ` +
  `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}.${pad(d.getUTCMilliseconds(), 3)}`

/**
 * Batches plugin log lines into ClickHouse. `write` never blocks or throws (it runs inside the
 * pipeline); lines are stamped at write time (uuid v7 id, so ids sort in write order) and inserted
 * every `flushIntervalMs` or `batchSize` lines. A failed insert keeps its lines for the next try.
 */
export class PluginLogWriter implements PluginLogSink {
  private buffer: LogEntry[] = []
  private timer: NodeJS.Timeout | undefined
  private flushing: Promise<void> = Promise.resolve()
  private dropped = 0
  private readonly batchSize: number
  private readonly intervalMs: number
  private readonly maxBuffered: number

  constructor(
    private readonly ch: ClickHouseClient,
    private readonly opts: LogWriterOptions = {},
  ) {
    this.batchSize = opts.batchSize ?? 1000
    this.intervalMs = opts.flushIntervalMs ?? 1000
    this.maxBuffered = opts.maxBuffered ?? 100_000
  }

  write(entry: LogInput): void {
    const now = new Date()
    this.buffer.push({ ...entry, id: uuidv7(), timestamp: now.toISOString(), instance_id: INSTANCE_ID })
    if (this.buffer.length > this.maxBuffered) {
      this.dropped += this.buffer.length - this.maxBuffered
      this.buffer.splice(0, this.buffer.length - this.maxBuffered)
    }
    if (this.buffer.length >= this.batchSize) this.flushInBackground()
    else this.arm()
  }

  /** Inserts everything written so far; resolves when it is in ClickHouse (rejects if it failed). */
  flush(): Promise<void> {
    const run = this.flushing.catch(() => undefined).then(() => this.insertBuffered())
    this.flushing = run
    return run
  }

  private arm(): void {
    if (this.timer) return
    this.timer = setTimeout(() => this.flushInBackground(), this.intervalMs)
    this.timer.unref()
  }

  // Failures are logged and retried by insertBuffered; nobody awaits a background flush.
  private flushInBackground(): void {
    this.flush().catch(() => undefined)
  }

  async close(): Promise<void> {
    await this.flush().catch((err) => this.opts.log?.warn({ err }, 'plugin log lines lost at shutdown'))
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
  }

  private async insertBuffered(): Promise<void> {
    if (this.timer) clearTimeout(this.timer)
    this.timer = undefined
    if (this.dropped > 0) {
      this.opts.log?.warn({ dropped: this.dropped }, 'plugin log buffer full, oldest lines dropped')
      this.dropped = 0
    }
    while (this.buffer.length > 0) {
      const batch = this.buffer.splice(0, this.batchSize)
      try {
        await this.ch.insert({
          table: PLUGIN_LOG_TABLE,
          format: 'JSONEachRow',
          values: batch.map((e) => ({
            ...e,
            timestamp: chDateTime(new Date(e.timestamp)),
          })),
        })
      } catch (err) {
        this.buffer.unshift(...batch)
        this.arm()
        this.opts.log?.warn({ err, lines: this.buffer.length }, 'plugin log insert failed; will retry')
        throw err
      }
    }
  }
}
