import { jetstreamManager } from '@nats-io/jetstream'
import { EVENTS_STREAM } from '../../../schema/jetstream.ts'
import type { NatsConnection } from '../../jetstream/connection.ts'
import type { Logger } from '../../observability/logger.ts'
import { DeadLetterIndex } from './dead-letters.ts'
import { LogWatch, WINDOW_SECONDS } from './log-watch.ts'
import { consumerCovers } from './subjects.ts'
import type { TailFilter, TailEvent } from './tail.ts'

// One per api process: starts the log watch and the dead-letter index when a console first asks,
// polls the projectors' durable consumers once a second while anyone watches, and stops everything
// after IDLE_MS without a viewer, so a Burrow nobody looks at pays nothing.

const IDLE_MS = 60_000
const POLL_MS = 1000

export interface ConsumerRow {
  name: string
  filter_subjects: string[]
  /** log messages not yet delivered to the consumer */
  pending_messages: number
  /** delivered, not yet acknowledged (being projected) */
  ack_pending_messages: number
  ack_floor: number
}

export interface TailSink {
  team: number
  /** called every flush that has something for this tail */
  send(batch: { events: TailEvent[]; skipped: number }): void
}

interface Running {
  watch: LogWatch
  dlq: DeadLetterIndex
  poller: NodeJS.Timeout
}

export class LiveHub {
  private running: Promise<Running> | undefined
  private lastUsed = 0
  private readonly sinks = new Map<TailSink, { take: () => { events: TailEvent[]; skipped: number } }>()
  private readonly idle: NodeJS.Timeout

  constructor(
    private readonly nc: NatsConnection,
    private readonly log: Logger,
    private readonly stream = EVENTS_STREAM,
  ) {
    this.idle = setInterval(() => void this.stopIfIdle(), IDLE_MS / 4)
    this.idle.unref()
  }

  /** Starts watching if needed; every caller keeps the watch alive for IDLE_MS more. */
  private use(): Promise<Running> {
    this.lastUsed = Date.now()
    if (!this.running) {
      const starting = this.start()
      this.running = starting
      starting.catch(() => {
        if (this.running === starting) this.running = undefined
      })
    }
    return this.running
  }

  private async start(): Promise<Running> {
    const watch = new LogWatch(this.nc, this.log, this.stream)
    const dlq = new DeadLetterIndex(this.nc, this.log)
    await watch.start(() => this.flush())
    await dlq.start().catch(async (err) => {
      await watch.stop()
      throw err
    })
    const poller = setInterval(() => void this.poll(watch), POLL_MS)
    await this.poll(watch)
    this.log.info('console: live watch started')
    return { watch, dlq, poller }
  }

  private async poll(watch: LogWatch): Promise<void> {
    try {
      const jsm = await jetstreamManager(this.nc)
      const rows: ConsumerRow[] = []
      for await (const c of jsm.consumers.list(this.stream)) {
        if (!c.config.durable_name) continue // a replay's or a console's reader
        const filters = c.config.filter_subjects ?? (c.config.filter_subject ? [c.config.filter_subject] : [])
        rows.push({
          name: c.name,
          filter_subjects: filters,
          pending_messages: c.num_pending,
          ack_pending_messages: c.num_ack_pending,
          ack_floor: c.ack_floor.stream_seq,
        })
      }
      rows.sort((a, b) => a.name.localeCompare(b.name))
      const now = Date.now()
      for (const subject of watch.seenSubjects()) {
        // Where several durables read a subject, the furthest one decides: a stale leftover
        // consumer must not freeze the chart.
        let floor = -1
        for (const r of rows)
          if (consumerCovers(r.filter_subjects, subject)) floor = Math.max(floor, r.ack_floor)
        if (floor >= 0) watch.acknowledged(subject, floor, now)
      }
    } catch (err) {
      this.log.debug({ err }, 'console: consumer poll failed')
    }
  }

  private flush(): void {
    for (const [sink, sub] of this.sinks) {
      const batch = sub.take()
      if (batch.events.length || batch.skipped) sink.send(batch)
    }
  }

  /**
   * The project's live figures (see docs/console.md for each field): only the project's own. The
   * consumers' progress and the messages left untracked are the whole log's (their ack floors move
   * with every project's traffic), so they are not here: operators read them at /metrics.
   */
  async stats(team: number) {
    const r = await this.use()
    const now = Date.now()
    return {
      project_id: team,
      now: new Date(now).toISOString(),
      watching_since: new Date(r.watch.startedMs).toISOString(),
      window_seconds: WINDOW_SECONDS,
      ...r.watch.stats(team, now),
      dead_letters: r.dlq.of(team),
    }
  }

  /** Adds a live tail of `team`'s events; the returned function removes it. */
  async tail(sink: TailSink, filter: TailFilter): Promise<() => void> {
    const r = await this.use()
    const sub = r.watch.subscribe(sink.team, filter)
    this.sinks.set(sink, sub)
    return () => {
      sub.close()
      this.sinks.delete(sink)
      this.lastUsed = Date.now()
    }
  }

  private async stopIfIdle(): Promise<void> {
    if (!this.running || this.sinks.size > 0 || Date.now() - this.lastUsed < IDLE_MS) return
    const running = this.running
    this.running = undefined
    await this.halt(running)
    this.log.info('console: live watch stopped (no viewer)')
  }

  private async halt(running: Promise<Running>): Promise<void> {
    const r = await running.catch(() => undefined)
    if (!r) return
    clearInterval(r.poller)
    await r.watch.stop().catch(() => undefined)
    await r.dlq.stop().catch(() => undefined)
  }

  async stop(): Promise<void> {
    clearInterval(this.idle)
    const running = this.running
    this.running = undefined
    if (running) await this.halt(running)
  }
}
